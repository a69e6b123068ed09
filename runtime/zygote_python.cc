#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "runtime/zygote_python.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace corral::runtime {
namespace {

// The Python half. preload() runs once in the template; run() runs in each sandbox's worker
// and does what `python3 [-u] (FILE | -c CODE) ARGS` does at startup and exit, minus what
// the template already did (interpreter start, site, the preloaded imports):
//   os.environ from the exec, sys.argv, sys.path (script dir, PYTHONPATH, site's), the
//   sitecustomize found on PYTHONPATH (corral's artifact hooks), a fresh __main__, then the
//   program; SystemExit and uncaught exceptions as python3 reports them; atexit handlers and
//   a final flush.
constexpr char kBootstrap[] = R"PY(
import os

# At-fork hooks the preloaded modules register are recorded, not registered: the template
# forks from C, never through os.fork, and a child runs them itself (after_fork below).
_register_at_fork = os.register_at_fork
_fork_hooks = []  # (before, after_in_child, after_in_parent), in registration order

def _record_at_fork(*, before=None, after_in_child=None, after_in_parent=None):
    hooks = (before, after_in_child, after_in_parent)
    if hooks == (None, None, None):
        raise TypeError("At least one argument is required.")
    for h in hooks:
        if h is not None and not callable(h):
            raise TypeError("'%s' must be callable, not %s" % (h, type(h).__name__))
    _fork_hooks.append(hooks)

os.register_at_fork = _record_at_fork

import atexit, builtins, sys, traceback, types

_base_path = [p for p in sys.path if p]
_child_hooks = []  # the after_in_child hooks a child runs (see _settle)

def preload(modules, warmup):
    import importlib
    loaded, missing = [], []
    for name in modules:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as e:
            missing.append("%s (%s)" % (name, e))
    if warmup:
        try:
            exec(compile(warmup, "<corral-zygote warmup>", "exec"), {})
        except Exception as e:
            missing.append("warmup (%s)" % e)
    # Font files matplotlib keeps open would be closed under the objects holding them in
    # every child (workers close every fd): drop them; a child reopens what it draws with.
    fm = sys.modules.get("matplotlib.font_manager")
    if fm is not None and hasattr(fm, "_get_font"):
        fm._get_font.cache_clear()
    _settle()
    import gc, json
    gc.collect()
    open_fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 3)
    gc.freeze()  # the template's objects stay out of every child's collections (fewer copies)
    # (the listdir's own fd is among them and closed by now)
    open_fds = [fd for fd in open_fds if os.path.exists("/proc/self/fd/%d" % fd)]
    return json.dumps({"python": sys.version.split()[0], "preloaded": loaded, "missing": missing,
                       "open_fds": open_fds})

# Which recorded after-fork hooks a child has to run. The template has one thread and forks
# outside any Python code, so no lock can be held across the fork and no other thread's
# state needs undoing: the hooks that only reset such state have nothing to do in a child
# and are skipped (threading's and logging's lock resets; matplotlib's font cache, emptied
# above). Every other hook (random's reseed, any a preloaded module brings) runs.
def _settle():
    global _numpy_state
    noop = []
    th = sys.modules.get("threading")
    if th is not None:
        noop.append(getattr(th, "_after_fork", None))
    lg = sys.modules.get("logging")
    if lg is not None:
        noop.append(getattr(lg, "_after_at_fork_child_reinit_locks", None))
    fm = sys.modules.get("matplotlib.font_manager")
    font_cache = getattr(fm, "_get_font", None) if fm is not None else None

    def skipped(h):
        if any(h is n for n in noop if n is not None):
            return True
        return font_cache is not None and getattr(h, "__self__", None) is font_cache and \
            getattr(h, "__name__", "") == "cache_clear"

    _child_hooks[:] = [c for b, c, p in _fork_hooks if c is not None and not skipped(c)]
    _numpy_state = _numpy_state_address()

# numpy's global generator (np.random.seed, np.random.rand, ...) is a MT19937 whose state,
# 624 32-bit words and a position, a child overwrites with fresh kernel randomness straight
# from C (python_interpret): what np.random.seed() does, without its ~150 page copies.
# Returns the state's address, checked here to be that layout, or 0: a child then calls
# np.random.seed().
_numpy_state = 0

def _numpy_state_address():
    np = sys.modules.get("numpy")
    if np is None:
        return 0
    try:
        rs = np.random.mtrand._rand
        bg = rs._bit_generator
        if type(bg).__name__ != "MT19937":
            return 0
        import ctypes
        addr = bg.ctypes.state_address
        words = (ctypes.c_uint32 * 625).from_address(addr)
        # Writes through the address must be what the generator reads, and reads what it holds.
        for i in range(624):
            words[i] = i + 1
        words[624] = 624
        st = bg.state["state"]
        ok = [int(k) for k in st["key"]] == list(range(1, 625)) and st["pos"] == 624
        rs.seed()  # fresh state again, and no cached gaussian (a child's state is only the words)
        st = bg.state["state"]
        ok = ok and list(words[:624]) == [int(k) for k in st["key"]] and words[624] == st["pos"]
        return addr if ok else 0
    except Exception:
        return 0

def after_fork():
    # What PyOS_AfterFork_Child would run (see _settle), then the hooks registered for real:
    # a fork in the user's program runs all of them, as in python3.
    for h in _child_hooks:
        try:
            h()
        except BaseException:
            sys.unraisablehook(types.SimpleNamespace(exc_type=sys.exc_info()[0], exc_value=sys.exc_info()[1],
                                                     exc_traceback=sys.exc_info()[2], err_msg=None, object=h))
    os.register_at_fork = _register_at_fork
    for b, c, p in _fork_hooks:
        _register_at_fork(**{k: v for k, v in (("before", b), ("after_in_child", c), ("after_in_parent", p))
                             if v is not None})

def _exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xff
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1

def _adopt_import_hooks():
    # sitecustomize hooks some modules on import (matplotlib.pyplot: plt.show() saves the
    # figure). Here they may be imported already: such a hook says how to patch them now.
    for hook in list(sys.meta_path):
        adopt = getattr(hook, "adopt_loaded", None)
        if adopt is not None:
            adopt()

def run(args, env, warm=False):
    # warm: a rehearsal in a prepared worker (python_prepare), with `pass`: it takes the
    # path a real run takes, so the template pages that path writes are copied before the
    # request instead of during it; the atexit functions are left for the real run.
    # The exec's environment: the C library's is the exec's array already (python_interpret);
    # os.environ (and os.environb, the same dict) as python3 builds it from that array.
    data = os.environ._data
    data.clear()
    for kv in env:
        k, sep, v = kv.partition(b"=")
        if k and sep:
            data.setdefault(k, v)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    i = 0
    while args[i] != "-c" and args[i].startswith("-"):
        if args[i] == "-u":
            unbuffered = True
        i += 1
    if args[i] == "-c":
        kind, target = "c", args[i + 1]
        sys.argv = ["-c"] + args[i + 2:]
        path0 = ""
    else:
        kind, target = "file", args[i]
        sys.argv = args[i:]
        path0 = os.path.dirname(os.path.abspath(target))
    if unbuffered:
        for s in (sys.stdout, sys.stderr):
            s.reconfigure(write_through=True)
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]
    sys.path[:] = [path0] + extra + _base_path
    np = sys.modules.get("numpy")
    if np is not None and not _numpy_state:
        np.random.seed()  # numpy's global generator: fresh entropy, not the template's state
    sys.modules.pop("sitecustomize", None)
    if any(os.path.exists(os.path.join(p, "sitecustomize.py")) for p in extra):
        try:
            import sitecustomize  # noqa: F401
        except Exception:
            traceback.print_exc()
    _adopt_import_hooks()
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    if kind == "file":
        main.__file__ = target
    sys.modules["__main__"] = main
    rc = 0
    try:
        if kind == "c":
            code = compile(target, "<string>", "exec")
        else:
            try:
                with open(target, "rb") as f:
                    source = f.read()
            except OSError as e:
                print("%s: can't open file %r: [Errno %d] %s" % (sys.executable, target, e.errno, e.strerror),
                      file=sys.stderr)
                return 2
            code = compile(source, target, "exec")
        exec(code, main.__dict__)
    except SystemExit as e:
        rc = _exit_code(e)
    except BaseException:
        t, v, tb = sys.exc_info()
        # Start the traceback at the user's code, as python3 shows it.
        while tb is not None and tb.tb_frame.f_code.co_filename == "<corral-zygote>":
            tb = tb.tb_next
        if v is not None:
            v.__traceback__ = tb
        sys.excepthook(t, v, tb)
        rc = 1
    try:
        if not warm:
            atexit._run_exitfuncs()
    except BaseException:
        pass
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            rc = rc or 120
    return rc
)PY";

PyObject* g_run = nullptr;
PyObject* g_after_fork = nullptr;
// numpy's global MT19937 state in the template (see _numpy_state_address), or null.
struct Mt19937State {
  uint32_t key[624];
  int pos;
};
Mt19937State* g_numpy_state = nullptr;

PyObject* bytes_list(char* const* items) {
  PyObject* list = PyList_New(0);
  for (char* const* p = items; list && *p; ++p) {
    PyObject* b = PyBytes_FromString(*p);
    if (!b || PyList_Append(list, b) != 0) {
      Py_XDECREF(b);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(b);
  }
  return list;
}

// Fresh kernel randomness for numpy's global generator: all 624 words, position at the end
// (the next draw regenerates from them), as np.random.seed() leaves it.
bool reseed_numpy() {
  auto* bytes = reinterpret_cast<char*>(g_numpy_state->key);
  size_t done = 0;
  while (done < sizeof g_numpy_state->key) {
    ssize_t n = getrandom(bytes + done, sizeof g_numpy_state->key - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  g_numpy_state->pos = 624;
  return true;
}

std::string py_error() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  std::string out = "python error";
  if (value) {
    PyObject* s = PyObject_Str(value);
    if (s) {
      const char* c = PyUnicode_AsUTF8(s);
      if (c) out = c;
      Py_DECREF(s);
    }
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return out;
}

PyObject* str_list(char* const* items) {
  PyObject* list = PyList_New(0);
  for (char* const* p = items; list && *p; ++p) {
    PyObject* s = PyUnicode_DecodeFSDefault(*p);
    if (!s || PyList_Append(list, s) != 0) {
      Py_XDECREF(s);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(s);
  }
  return list;
}

}  // namespace

Status python_start(const ZygoteOptions& options, nlohmann::json* info) {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  config.install_signal_handlers = 1;
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, options.interpreter.c_str());
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    return Status(ErrorCode::kUnsupported, std::string("start python: ") + (st.err_msg ? st.err_msg : "failed"));
  }
  PyObject* module = PyImport_AddModule("_corral_zygote");  // borrowed
  if (!module) return Internal("create the bootstrap module: " + py_error());
  PyObject* dict = PyModule_GetDict(module);  // borrowed
  if (!PyDict_GetItemString(dict, "__builtins__")) PyDict_SetItemString(dict, "__builtins__", PyEval_GetBuiltins());
  // Compiled under its own file name, so that run() can cut its frame off tracebacks.
  PyObject* code = Py_CompileString(kBootstrap, "<corral-zygote>", Py_file_input);
  if (!code) return Internal("compile the bootstrap: " + py_error());
  PyObject* r = PyEval_EvalCode(code, dict, dict);
  Py_DECREF(code);
  if (!r) return Internal("load the bootstrap: " + py_error());
  Py_DECREF(r);
  g_run = PyDict_GetItemString(dict, "run");
  g_after_fork = PyDict_GetItemString(dict, "after_fork");
  PyObject* preload = PyDict_GetItemString(dict, "preload");
  if (!g_run || !g_after_fork || !preload) return Internal("bootstrap lacks run/after_fork/preload");
  Py_INCREF(g_run);
  Py_INCREF(g_after_fork);
  PyObject* mods = PyList_New(0);
  for (const std::string& m : options.preload) {
    PyObject* s = PyUnicode_FromString(m.c_str());
    PyList_Append(mods, s);
    Py_DECREF(s);
  }
  PyObject* warm = PyUnicode_FromString(options.warmup.c_str());
  PyObject* out = PyObject_CallFunctionObjArgs(preload, mods, warm, nullptr);
  Py_DECREF(mods);
  Py_DECREF(warm);
  if (!out) return Internal("preload: " + py_error());
  const char* text = PyUnicode_AsUTF8(out);
  *info = nlohmann::json::parse(text ? text : "{}", nullptr, false);
  Py_DECREF(out);
  if (info->is_discarded()) *info = nlohmann::json::object();
  PyObject* state = PyDict_GetItemString(dict, "_numpy_state");  // borrowed
  if (state && PyLong_Check(state)) g_numpy_state = static_cast<Mt19937State*>(PyLong_AsVoidPtr(state));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    g_numpy_state = nullptr;
  }
  return Status::Ok();
}

bool python_accepts(char* const* argv) {
  if (!argv[0] || !argv[1]) return false;  // the REPL
  for (int i = 1; argv[i]; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "-c") == 0) return argv[i + 1] != nullptr;
    if (a[0] != '-') return true;  // the script
    if (strcmp(a, "-u") != 0 && strcmp(a, "-B") != 0 && strcmp(a, "-E") != 0 && strcmp(a, "-s") != 0 &&
        strcmp(a, "-q") != 0) {
      return false;  // -m, -, -W, -X, ...: a real python3 runs it
    }
  }
  return false;
}

// What a fork of the template runs once before its first program: what PyOS_AfterFork_Child
// and the at-fork hooks would (after_fork), and numpy's generator reseeded. 0 until it has
// run, 1 after, -errno if numpy's generator could get no randomness.
int g_settled = 0;

void settle_child() {
  PyOS_AfterFork_Child();
  if (g_numpy_state && !reseed_numpy()) {
    g_settled = -errno;
    return;
  }
  PyObject* done = PyObject_CallNoArgs(g_after_fork);
  if (!done) PyErr_Print();
  Py_XDECREF(done);
  g_settled = 1;
}

void python_prepare() { python_rehearse("pass"); }

void python_rehearse(const char* code) {
  if (!g_run) return;
  settle_child();
  if (g_settled != 1) return;
  PyObject* args = Py_BuildValue("[ss]", "-c", code);
  PyObject* env = PyList_New(0);
  PyObject* r = args && env ? PyObject_CallFunctionObjArgs(g_run, args, env, Py_True, nullptr) : nullptr;
  if (!r) PyErr_Clear();
  Py_XDECREF(r);
  Py_XDECREF(args);
  Py_XDECREF(env);
}

int python_interpret(char* const* argv, char* const* envp, const char* /*cwd: the worker's chdir*/) {
  if (!g_run || !python_accepts(argv)) return -1;
  if (g_settled == 0) settle_child();
  // The C library's environment is the exec's, as after an execve (the array lives as long
  // as this process); run() makes os.environ from the same entries.
  environ = const_cast<char**>(envp);
  if (g_settled < 0) {
    fprintf(stderr, "corral-zygote: no randomness for numpy's generator: %s\n", strerror(-g_settled));
    return 1;
  }
  PyObject* args = str_list(argv + 1);
  PyObject* env = bytes_list(envp);
  int rc = 1;
  if (args && env) {
    PyObject* r = PyObject_CallFunctionObjArgs(g_run, args, env, nullptr);
    if (r) {
      rc = static_cast<int>(PyLong_AsLong(r)) & 0xff;
      Py_DECREF(r);
    } else {
      PyErr_Print();
    }
  }
  Py_XDECREF(args);
  Py_XDECREF(env);
  fflush(nullptr);  // C-level stdio of extension modules; Python's own was flushed by run()
  return rc;
}

}  // namespace corral::runtime
