// The Python interactive driver and its relay (protocol: drivers.h). /usr/bin/python3 and
// its standard library only.
#include "src/lang/drivers/drivers.h"

namespace corral::lang {

// One interpreter holding a session's state. Each run's code is parsed, its statements
// executed in one persistent __main__ namespace and a final expression evaluated, its
// repr() returned (None is not a value, as in the REPL; the value is also bound to `_`).
// Top-level await works (the coroutine runs on one persistent event loop). Figures still
// open after a run are saved by the sitecustomize hook, as at the exit of a script.
extern const char kPythonDriver[] = R"PY(import ast
import builtins
import importlib
import json
import linecache
import os
import select
import signal
import socket
import struct
import sys
import threading
import traceback
import types

_SOCKET = sys.argv[1]
_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_CO_COROUTINE = 0x80
_MAX_VALUE = 1 << 20
_running = False  # user code is running: only then does SIGINT interrupt
_loop = None
_cells = 0
_stdio_lock = threading.Lock()

_main = types.ModuleType("__main__")
_main.__dict__["__builtins__"] = builtins
_ns = _main.__dict__


def _on_sigint(signum, frame):
    if _running:
        raise KeyboardInterrupt


def _text(s):
    # JSON strings must be valid UTF-8: lone surrogates become escapes.
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def _send(conn, msg):
    data = json.dumps(msg).encode("utf-8")
    conn.sendall(struct.pack(">I", len(data)) + data)


def _recv_request(conn):
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    try:
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = conn.recv(1 << 20)
            if not chunk:
                raise EOFError
            data += chunk
        (n,) = struct.unpack(">I", data[:4])
        return json.loads(data[4 : 4 + n]), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _attach(fds):
    # The relay's stdin, stdout and stderr become this process's for the run: output goes
    # straight to the exec's pipes (capped and streamed there), subprocesses' included.
    with _stdio_lock:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
    sys.stdin = open(0, "r", encoding="utf-8", errors="surrogateescape", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)


def _release():
    # Lets go of the relay's pipes (the exec cannot end while a copy stays open); later
    # output, from threads the run left behind, goes to /dev/null.
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass
    with _stdio_lock:
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        os.close(null)


class _Watch(threading.Thread):
    """While a run is going: if the relay disappears (killed at the output cap or by the
    exec's wall clock), release its pipes at once and interrupt the run."""

    def __init__(self, conn):
        super().__init__(daemon=True)
        self.conn = conn
        self.done = threading.Event()

    def run(self):
        p = select.poll()
        p.register(self.conn.fileno(), select.POLLIN | select.POLLHUP)
        while not self.done.is_set():
            if p.poll(100) and not self.done.is_set():
                _release()
                os.kill(os.getpid(), signal.SIGINT)
                return


def _eval(code):
    global _loop
    result = eval(code, _ns)
    if code.co_flags & _CO_COROUTINE:  # top-level await
        if _loop is None:
            import asyncio

            _loop = asyncio.new_event_loop()
        result = _loop.run_until_complete(result)
    return result


def _print_exception(e):
    # As python would print it for a script: without the driver's own frames.
    te = traceback.TracebackException(type(e), e, e.__traceback__)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != __file__])
    sys.stderr.writelines(te.format())


def _describe(e):
    text = str(e)
    return _text(type(e).__name__ + (": " + text if text else ""))


def _repr(value):
    try:
        text = repr(value)
    except BaseException as e:
        text = "<repr() failed: %s: %s>" % (type(e).__name__, e)
    if len(text) > _MAX_VALUE:
        text = text[:_MAX_VALUE] + "...<truncated>"
    return _text(text)


def _run(code):
    global _running, _cells
    _cells += 1
    name = "<cell-%d>" % _cells
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    importlib.invalidate_caches()  # libraries installed since the last run
    _running = True
    try:
        tree = ast.parse(code, name)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        _eval(compile(tree, name, "exec", _FLAGS, dont_inherit=True))
        value = None
        if last is not None:
            expr = ast.Expression(last.value)
            value = _eval(compile(expr, name, "eval", _FLAGS, dont_inherit=True))
        _running = False
        if value is None:
            return {"op": "done", "status": "ok", "value": None}
        builtins._ = value
        return {"op": "done", "status": "ok", "value": _repr(value)}
    except SystemExit as e:
        _running = False
        code = e.code
        if code is None:
            exit_code = 0
        elif isinstance(code, int):
            exit_code = code
        else:
            print(code, file=sys.stderr)
            exit_code = 1
        return {"op": "done", "status": "exit", "exit_code": exit_code}
    except BaseException as e:
        _running = False
        _print_exception(e)
        return {"op": "done", "status": "error", "error": _describe(e)}
    finally:
        _running = False


def _save_figures():
    hook = sys.modules.get("sitecustomize")
    save = getattr(hook, "_save_open_figures", None)
    if save is not None:
        save()


def _serve(conn):
    _send(conn, {"op": "hello", "pid": os.getpid()})
    msg, fds = _recv_request(conn)
    if msg.get("op") != "run" or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return
    _attach(fds)
    watch = _Watch(conn)
    watch.start()
    try:
        result = _run(msg.get("code", ""))
        try:
            _save_figures()
        except BaseException as e:
            print("corral: could not save figures: %s" % e, file=sys.stderr)
    finally:
        watch.done.set()
        _release()
    _send(conn, result)


def main():
    signal.signal(signal.SIGINT, _on_sigint)
    sys.modules["__main__"] = _main
    sys.argv = [""]
    sys.path[0] = os.getcwd()  # as for a script in the workdir
    try:
        os.unlink(_SOCKET)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(_SOCKET)
    server.listen(8)
    with open(_SOCKET + ".pid", "w") as f:
        f.write(str(os.getpid()))
    _release()  # closing stdout and stderr tells exec_detached that the driver is ready
    while True:
        try:
            conn, _ = server.accept()
        except (InterruptedError, KeyboardInterrupt):
            continue
        try:
            _serve(conn)
        except BaseException:
            pass  # that relay is gone or broke the protocol; the state is intact
        finally:
            conn.close()


main()
)PY";

// One run's exec: hands the code and this process's stdin, stdout and stderr to the driver,
// waits for it and enforces the timeout (SIGINT, then SIGKILL after the grace period).
extern const char kPythonRelay[] = R"PY(import json
import os
import signal
import socket
import struct
import sys
import time


class Frames:
    def __init__(self, s):
        self.s = s
        self.buf = b""

    def read(self, deadline):
        """The next message; None at the deadline; EOFError when the driver is gone."""
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    msg = json.loads(self.buf[4 : 4 + n])
                    self.buf = self.buf[4 + n :]
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(1 << 20)
            except socket.timeout:
                return None
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise EOFError
            self.buf += chunk


def kill_stuck_driver(sock_path):
    try:
        with open(sock_path + ".pid") as f:
            os.kill(int(f.read()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def relay(sock_path, code_path, timeout, grace):
    with open(code_path, "rb") as f:
        code = f.read().decode("utf-8", "replace")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock_path)
    except OSError as e:
        return {"status": "no_driver", "error": str(e)}
    frames = Frames(s)
    try:
        hello = frames.read(time.monotonic() + 5)
        if hello is None:  # still busy with a run whose relay is gone: it is stuck
            kill_stuck_driver(sock_path)
            return {"status": "no_driver", "error": "the driver did not answer; it was killed"}
        pid = hello["pid"]
        data = json.dumps({"op": "run", "code": code}).encode("utf-8")
        frame = struct.pack(">I", len(data)) + data
        s.settimeout(None)
        try:
            sent = socket.send_fds(s, [frame], [0, 1, 2])
            if sent < len(frame):
                s.sendall(frame[sent:])
        except OSError:
            pass  # a quick run may be over, and its connection closed, already: read on
        done = frames.read(time.monotonic() + timeout)
        if done is not None:
            return done
        os.kill(pid, signal.SIGINT)
        done = frames.read(time.monotonic() + grace)
        if done is not None:
            done["status"] = "timeout"
            return done
        os.kill(pid, signal.SIGKILL)
        try:
            frames.read(time.monotonic() + 2)
        except EOFError:
            pass
        return {"status": "killed"}
    except EOFError:
        return {"status": "died"}


def main():
    sock_path, code_path, result_path = sys.argv[1:4]
    timeout, grace = int(sys.argv[4]) / 1000.0, int(sys.argv[5]) / 1000.0
    try:
        os.unlink(result_path)
    except FileNotFoundError:
        pass
    result = relay(sock_path, code_path, timeout, grace)
    with open(result_path + ".tmp", "w") as f:
        json.dump(result, f)
    os.rename(result_path + ".tmp", result_path)


main()
)PY";

}  // namespace corral::lang
