// Python: Debian's /usr/bin/python3 (never a pyenv shim), libraries from local wheels or
// source trees installed with pip into the sandbox's writable layer.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

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
    return {{"PYTHONPATH", kLibDir}, {"MPLBACKEND", "Agg"}, {"PYTHONDONTWRITEBYTECODE", "1"},
            {"MPLCONFIGDIR", "/tmp/matplotlib"}};
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
