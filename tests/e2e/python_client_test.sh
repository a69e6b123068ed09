#!/bin/bash
# The Python client (clients/python) against a real `corral serve` on a temporary socket:
# one-shot runs, sessions with files, copy_to/from_runtime, matplotlib plots, streaming,
# timeouts and security refusals as llm-sandbox's exceptions, bad input, the LangChain-style
# example, and the README's Python examples. Prints PASS/FAIL/SKIP lines; exits 1 on a FAIL.
# Usage: tests/e2e/python_client_test.sh /path/to/corral   (from the repository root)
set -u
CORRAL=${1:?usage: $0 /path/to/corral}
CORRAL=$(readlink -f "$CORRAL")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
if [ "$(id -u)" != 0 ]; then echo "SKIP python_client: needs root (the native backend)"; exit 0; fi
if ! $PY -c 'import sys; assert sys.version_info >= (3, 7)' 2>/dev/null; then
  echo "SKIP python_client: no python3 >= 3.7 at $PY"; exit 0
fi

TMP=$(mktemp -d /tmp/corral-pyclient-XXXXXX)
chmod 755 "$TMP"
SOCK=$TMP/corral.sock
LOG=$TMP/serve.log
SERVER=
cleanup() {
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# A local package for install-by-name (servers install from --library-dir only).
mkdir -p "$TMP/libs/greet_pkg"
cat > "$TMP/libs/greet_pkg/greet_pkg.py" <<'EOF'
def hello(name):
    return "hello, " + name
EOF
cat > "$TMP/libs/greet_pkg/setup.py" <<'EOF'
from setuptools import setup
setup(name="greet_pkg", version="1.0", py_modules=["greet_pkg"])
EOF
chmod -R a+rX "$TMP/libs"

"$CORRAL" serve --socket "$SOCK" --max-concurrent 4 --library-dir "$TMP/libs" 2>"$LOG" &
SERVER=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
if [ ! -S "$SOCK" ]; then echo "FAIL python_client: server did not start: $(cat "$LOG")"; exit 1; fi

export CORRAL_SOCKET=$SOCK
export PYTHONPATH=$ROOT/clients/python
FAILED=0

$PY - <<'EOF' || FAILED=1
import os, sys, tempfile, traceback
import corral
from corral import SandboxSession

failures = 0
def check(name, fn):
    global failures
    try:
        r = fn()
        if r == "SKIP":
            print("SKIP python_client:", name)
        else:
            print("PASS python_client:", name)
    except Exception:
        failures += 1
        print("FAIL python_client:", name)
        traceback.print_exc()

def one_shot():
    r = corral.run("print(6 * 7)", lang="python")
    assert r.stdout == "42\n" and r.exit_code == 0 and r.success(), r
    r = corral.run("cat data.txt; echo", lang="bash", files={"data.txt": "from a file"})
    assert r.stdout == "from a file\n", r
    r = corral.run("import sys; sys.exit(3)", lang="python")
    assert r.exit_code == 3 and r.status == "nonzero_exit", r
check("one-shot run, files in, exit code", one_shot)

def session_files():
    with SandboxSession(lang="python") as s:
        s.write_file("notes/in.txt", "kept")
        r = s.run("print(open('notes/in.txt').read()); open('out.txt','w').write('made here')")
        assert r.stdout == "kept\n", r
        r = s.execute_command("cat out.txt")
        assert r.stdout == "made here", r
        assert s.read_file("out.txt") == b"made here"
        assert s.read_file("/sandbox/out.txt") == b"made here"
        assert s.info()["runs"] == 2
check("session: files persist across run and execute_command", session_files)

def copy_both_ways():
    d = tempfile.mkdtemp()
    os.makedirs(os.path.join(d, "tree/sub"))
    open(os.path.join(d, "tree/a.txt"), "w").write("A")
    open(os.path.join(d, "tree/sub/b.txt"), "w").write("B")
    with SandboxSession(lang="bash") as s:
        s.copy_to_runtime(os.path.join(d, "tree"), "/sandbox/tree")
        r = s.execute_command("cat tree/a.txt tree/sub/b.txt > both.txt && cat both.txt")
        assert r.stdout == "AB", r
        s.copy_from_runtime("both.txt", os.path.join(d, "back/both.txt"))
        assert open(os.path.join(d, "back/both.txt")).read() == "AB"
check("copy_to_runtime (a tree) and copy_from_runtime", copy_both_ways)

def plots():
    try:
        import matplotlib  # noqa: F401  (the sandbox uses the host's python rootfs)
    except ImportError:
        return "SKIP"
    with SandboxSession(lang="python", timeout=60) as s:
        r = s.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()")
        assert r.success(), r
        assert len(r.plots) == 1, r.plots
        p = r.plots[0]
        assert p.format == "png" and p.mime == "image/png", p
        assert p.content[:8] == b"\x89PNG\r\n\x1a\n"
check("matplotlib plot comes back base64 with its mime type", plots)

def streaming():
    seen = []
    with SandboxSession(lang="python") as s:
        r = s.run("import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr)",
                  on_output=lambda stream, text: seen.append((stream, text)))
    assert ("stdout", "out\n") in seen and ("stderr", "err\n") in seen, seen
    assert r.stdout == "out\n", r
check("streaming output (SSE) via on_output", streaming)

def timeout():
    try:
        corral.run("import time\ntime.sleep(10)", lang="python", timeout=0.5)
    except corral.SandboxTimeoutError as e:
        assert e.result is not None and e.result.status == "timeout"
        return
    raise AssertionError("no SandboxTimeoutError")
check("timeout raises SandboxTimeoutError", timeout)

def security():
    with SandboxSession(lang="python", security_policy="strict") as s:
        try:
            s.run("import subprocess\nsubprocess.run(['id'])")
        except corral.SecurityViolationError as e:
            assert "subprocess" in str(e), e
            assert isinstance(e, corral.SecurityError)
            return
    raise AssertionError("no SecurityViolationError")
check("security policy refusal raises SecurityViolationError", security)

def install():
    with SandboxSession(lang="python", timeout=120) as s:
        r = s.install(["greet_pkg"])
        assert r.success(), (r.stdout, r.stderr)
        r = s.run("import greet_pkg\nprint(greet_pkg.hello('corral'))")
        assert r.stdout == "hello, corral\n", r
    r = corral.run("import greet_pkg; print(greet_pkg.hello('one-shot'))", lang="python", libraries=["greet_pkg"])
    assert r.stdout == "hello, one-shot\n", r
check("install and libraries= from the server's library dir", install)

def bad_input():
    try:
        corral.run("x", lang="cobol")
        raise AssertionError("cobol accepted")
    except corral.LanguageNotSupportedError as e:
        assert e.field == "language" and e.status == 400, e
    with SandboxSession(lang="bash") as s:
        for evil in ["../../etc/passwd", "a/../../../x"]:
            try:
                s.read_file(evil)
                raise AssertionError("traversal accepted: " + evil)
            except corral.ValidationError as e:
                assert e.field == "path" and e.status == 400, e
        try:
            s.execute_command("   ")
            raise AssertionError("empty command accepted")
        except corral.CommandEmptyError:
            pass
        try:
            s.install(["../../etc"])
            raise AssertionError("library path accepted")
        except corral.LibraryInstallationNotSupportedError as e:
            assert e.field == "libraries[0]", e
        sid = s.session_id
    try:
        s.session_id = sid  # closed on the server now
        s.run("print(1)")
        raise AssertionError("closed session ran")
    except corral.NotOpenSessionError as e:
        assert e.field == "session_id" and e.status == 404
    s.session_id = None
    try:
        corral.run("print(1)", timeout=10**9)
        raise AssertionError("huge timeout accepted")
    except corral.ValidationError as e:
        assert e.field == "timeout_ms", e
    try:
        corral.run("print(1)", socket="/nonexistent/corral.sock")
        raise AssertionError("no connection error")
    except corral.ConnectionFailedError:
        pass
check("bad input raises exceptions naming the field", bad_input)

def interactive():
    try:
        s = SandboxSession(lang="python", interactive=True).open()
    except corral.SandboxError as e:
        if e.field == "interactive":
            return "SKIP"
        raise
    with s:
        s.run("x = 41\nimport math")
        r = s.run("x + 1")
        assert r.value == "42", r
        r = s.run("print(math.sqrt(x + 8))")
        assert r.stdout == "7.0\n", r
check("interactive session keeps state and returns the last value", interactive)

def languages():
    names = [l["name"] for l in corral.Client().languages()]
    assert "python" in names and "bash" in names, names
check("languages list", languages)

sys.exit(1 if failures else 0)
EOF

# The LangChain-style example runs as a script (no LangChain needed).
if out=$($PY "$ROOT/clients/python/examples/langchain_tool.py" 2>&1) && grep -q "^tool says: 4950$" <<<"$out"; then
  echo "PASS python_client: examples/langchain_tool.py"
else
  echo "FAIL python_client: examples/langchain_tool.py: $out"; FAILED=1
fi

# The README's Python examples, extracted and run as they are written.
if [ -f "$ROOT/README.md" ] && grep -q '^## Python client' "$ROOT/README.md"; then
  $PY - "$ROOT/README.md" "$TMP" <<'EOF' || FAILED=1
import re, subprocess, sys
text = open(sys.argv[1]).read()
section = text.split("## Python client", 1)[1]
section = re.split(r"\n## ", section, maxsplit=1)[0]
blocks = re.findall(r"```python\n(.*?)```", section, re.S)
if not blocks:
    print("FAIL python_client: README Python section has no ```python examples"); sys.exit(1)
bad = 0
for i, code in enumerate(blocks):
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=120)
    if p.returncode == 0:
        print("PASS python_client: README python example %d" % (i + 1))
    else:
        bad += 1
        print("FAIL python_client: README python example %d:\n%s%s" % (i + 1, p.stdout, p.stderr))
sys.exit(1 if bad else 0)
EOF
else
  echo "SKIP python_client: README.md has no '## Python client' section yet"
fi

# Shut down by PID: SIGTERM, clean exit, socket gone, no sandbox left behind.
kill -TERM "$SERVER"
if wait "$SERVER"; then echo "PASS python_client: SIGTERM stops the server with exit 0"; else
  echo "FAIL python_client: server exit status $? after SIGTERM: $(tail -3 "$LOG")"; FAILED=1; fi
left=$(pgrep -P "$SERVER" 2>/dev/null | wc -l)
if [ ! -e "$SOCK" ] && [ "$left" = 0 ]; then echo "PASS python_client: nothing left after shutdown"; else
  echo "FAIL python_client: socket or processes left after shutdown"; FAILED=1; fi
SERVER=
exit $FAILED
