// Python: Debian's /usr/bin/python3 (never a pyenv shim), libraries from local wheels or
// source trees installed with pip into the sandbox's writable layer.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

// Loaded by every python process in the sandbox (it is first on PYTHONPATH). It costs
// nothing until the program imports matplotlib.pyplot: then plt.show() saves the open
// figures instead of trying to open a window, and figures still open at exit are saved
// too — no change to the user's code. Seaborn draws with matplotlib, so it is covered.
constexpr char kSiteCustomize[] = R"PY(import atexit, os, sys

_DIR = os.environ.get("CORRAL_PLOT_DIR", "/sandbox/.corral/plots")
_FMT = os.environ.get("CORRAL_PLOT_FORMAT", "png")
_count = 0


def _save_open_figures(*args, **kwargs):
    global _count
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        os.makedirs(_DIR, exist_ok=True)
        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            _count += 1
            fig.savefig(os.path.join(_DIR, "plot-%03d.%s" % (_count, _FMT)), format=_FMT)
            plt.close(fig)
    except Exception as e:  # a figure that cannot be saved must not break the program
        print("corral: could not save a figure: %s" % e, file=sys.stderr)


class _PyplotHook:
    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            module.show = _save_open_figures
            # After pyplot's own atexit handler (which closes every figure): atexit runs
            # handlers last-registered first, so this one sees the figures still open.
            atexit.register(_save_open_figures)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _PyplotHook())
)PY";

class Python : public LanguageHandler {
 public:
  const char* name() const override { return "python"; }
  std::vector<std::string> aliases() const override { return {"py", "python3"}; }
  const char* binary() const override { return "/usr/bin/python3"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/python3", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.py"; }
  std::vector<std::string> run_argv(const std::string& file, const Limits&) const override {
    return {"/usr/bin/python3", file};
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const override {
    // --no-index: nothing is fetched; --target: into the sandbox, not the (read-only) system.
    std::vector<std::string> argv = {"/usr/bin/python3", "-m", "pip", "install", "--no-index", "--no-deps",
                                     "--no-cache-dir", "--disable-pip-version-check", "--target", kLibDir};
    for (const auto& l : libs) argv.push_back(l.sandbox_path);
    return argv;
  }
  std::map<std::string, std::string> env(const Limits&) const override {
    return {{"PYTHONPATH", std::string(kCorralDir) + "/python:" + kLibDir},
            {"MPLBACKEND", "Agg"},
            {"PYTHONDONTWRITEBYTECODE", "1"},
            {"MPLCONFIGDIR", "/tmp/matplotlib"},
            {"CORRAL_PLOT_DIR", kPlotDir}};
  }
  std::vector<FileEntry> support_files() const override {
    return {{std::string(kCorralDir) + "/python/sitecustomize.py", kSiteCustomize, 0644}};
  }
  // seccomp/profiles/python.json: the common base + epoll (asyncio, selectors).
  std::string seccomp_profile() const override { return "python"; }
};

}  // namespace

const LanguageHandler& python_language() {
  static const Python p;
  return p;
}

}  // namespace corral::lang
