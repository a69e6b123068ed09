// Python: Debian's /usr/bin/python3 (never a pyenv shim), libraries from local wheels or
// source trees installed with pip into the sandbox's writable layer.
#include "src/lang/drivers/drivers.h"
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

// Loaded by every python process in the sandbox (it is first on PYTHONPATH). It costs
// nothing until the program imports matplotlib.pyplot or plotly.io: then plt.show() saves
// the open figures instead of trying to open a window (figures still open at exit are
// saved too), and a plotly figure's fig.show() is saved as a standalone HTML page with
// plotly.js inlined (it works offline) instead of opening a browser — no change to the
// user's code. Seaborn draws with matplotlib, so it is covered. The interactive driver
// calls _save_open_figures after each run.
constexpr char kSiteCustomize[] = R"PY(import atexit, os, sys

_DIR = os.environ.get("CORRAL_PLOT_DIR", "/sandbox/.corral/plots")
_FMT = os.environ.get("CORRAL_PLOT_FORMAT", "png")
_count = 0


def _next_path(ext):
    global _count
    os.makedirs(_DIR, exist_ok=True)
    _count += 1
    return os.path.join(_DIR, "plot-%03d.%s" % (_count, ext))


def _save_open_figures(*args, **kwargs):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            fig.savefig(_next_path(_FMT), format=_FMT)
            plt.close(fig)
    except Exception as e:  # a figure that cannot be saved must not break the program
        print("corral: could not save a figure: %s" % e, file=sys.stderr)


def _patch_pyplot(module):
    module.show = _save_open_figures
    # After pyplot's own atexit handler (which closes every figure): atexit runs
    # handlers last-registered first, so this one sees the figures still open.
    atexit.register(_save_open_figures)


def _patch_plotly_io(pio):
    from plotly.io.base_renderers import ExternalRenderer

    class SaveHtml(ExternalRenderer):
        def render(self, fig_dict):
            try:
                pio.write_html(fig_dict, _next_path("html"), include_plotlyjs=True, full_html=True, validate=False)
            except Exception as e:
                print("corral: could not save a plotly figure: %s" % e, file=sys.stderr)

    pio.renderers["corral"] = SaveHtml()
    pio.renderers.default = "corral"


_PATCHES = {"matplotlib.pyplot": _patch_pyplot, "plotly.io": _patch_plotly_io}


class _ImportHook:
    def find_spec(self, name, path=None, target=None):
        patch = _PATCHES.pop(name, None)
        if patch is None:
            return None
        if not _PATCHES:
            sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)  # not found here again: popped above
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            try:
                patch(module)
            except Exception as e:
                print("corral: could not hook %s: %s" % (name, e), file=sys.stderr)

        spec.loader.exec_module = exec_module
        return spec

    def adopt_loaded(self):
        # In a zygote's interpreter some of these were imported before this file ran (see
        # runtime/zygote_python.cc, which calls this): patch those modules now.
        for name in [n for n in _PATCHES if n in sys.modules]:
            patch = _PATCHES.pop(name)
            try:
                patch(sys.modules[name])
            except Exception as e:
                print("corral: could not hook %s: %s" % (name, e), file=sys.stderr)
        if not _PATCHES and self in sys.meta_path:
            sys.meta_path.remove(self)


sys.meta_path.insert(0, _ImportHook())
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
  std::optional<InteractiveDriver> interactive_driver() const override {
    const std::string dir = kDriverDir;
    // The relay: isolated (-I) and without site (-S), it starts in a few milliseconds.
    return InteractiveDriver{{{dir + "/python_driver.py", kPythonDriver, 0644}, {dir + "/python_relay.py", kPythonRelay, 0644}},
                             {"/usr/bin/python3", dir + "/python_driver.py", kDriverSocket},
                             {"/usr/bin/python3", "-I", "-S", dir + "/python_relay.py", kDriverSocket}};
  }
};

}  // namespace

const LanguageHandler& python_language() {
  static const Python p;
  return p;
}

}  // namespace corral::lang
