// R: Rscript; libraries from local source tarballs or directories via R CMD INSTALL.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class R : public LanguageHandler {
 public:
  const char* name() const override { return "r"; }
  std::vector<std::string> aliases() const override { return {"rscript"}; }
  const char* binary() const override { return "/usr/bin/Rscript"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/Rscript", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.R"; }
  std::vector<std::string> run_argv(const std::string& file, const Limits&) const override {
    return {"/usr/bin/Rscript", file};
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const override {
    std::vector<std::string> argv = {"/bin/sh", "-c", std::string("mkdir -p ") + kLibDir +
                                                          " && exec /usr/bin/R CMD INSTALL --no-docs --no-html -l " +
                                                          kLibDir + " \"$@\"",
                                     "r-install"};
    for (const auto& l : libs) argv.push_back(l.sandbox_path);
    return argv;
  }
  std::map<std::string, std::string> env(const Limits&) const override { return {{"R_LIBS_USER", kLibDir}}; }
  // seccomp/profiles/r.json: the common base only.
  std::string seccomp_profile() const override { return "r"; }
};

}  // namespace

const LanguageHandler& r_language() {
  static const R r;
  return r;
}

}  // namespace corral::lang
