#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "runtime/zygote_python.h"

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
import atexit, builtins, os, sys, traceback, types

_base_path = [p for p in sys.path if p]

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
    import gc, json
    gc.collect()
    open_fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 3)
    gc.freeze()  # the template's objects stay out of every child's collections (fewer copies)
    # (the listdir's own fd is among them and closed by now)
    open_fds = [fd for fd in open_fds if os.path.exists("/proc/self/fd/%d" % fd)]
    return json.dumps({"python": sys.version.split()[0], "preloaded": loaded, "missing": missing,
                       "open_fds": open_fds})

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

def run(args, env):
    os.environ.clear()
    for kv in env:
        k, sep, v = kv.partition("=")
        if k and sep:
            os.environ[k] = v
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
    if np is not None:
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
  PyObject* preload = PyDict_GetItemString(dict, "preload");
  if (!g_run || !preload) return Internal("bootstrap lacks run/preload");
  Py_INCREF(g_run);
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

int python_interpret(char* const* argv, char* const* envp, const char* /*cwd: the worker's chdir*/) {
  if (!g_run || !python_accepts(argv)) return -1;
  PyOS_AfterFork_Child();
  PyObject* args = str_list(argv + 1);
  PyObject* env = str_list(envp);
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
