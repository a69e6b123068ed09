// R: Rscript; libraries from local source tarballs or directories via R CMD INSTALL.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

// R's default device in a script is a PDF file; make it PNG files in the plot directory,
// one per page, so plots come back as images without changes to the user's code.
constexpr char kProfile[] = R"R(local({
  dir <- Sys.getenv("CORRAL_PLOT_DIR", "/sandbox/.corral/plots")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  options(device = function(...) grDevices::png(filename = file.path(dir, "Rplot-%03d.png"), ...))
})
)R";

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
  std::map<std::string, std::string> env(const Limits&) const override {
    return {{"R_LIBS_USER", kLibDir},
            {"R_PROFILE_USER", std::string(kCorralDir) + "/Rprofile"},
            {"CORRAL_PLOT_DIR", kPlotDir}};
  }
  std::vector<FileEntry> support_files() const override {
    return {{std::string(kCorralDir) + "/Rprofile", kProfile, 0644}};
  }
  // seccomp/profiles/r.json: the common base only.
  std::string seccomp_profile() const override { return "r"; }
};

}  // namespace

const LanguageHandler& r_language() {
  static const R r;
  return r;
}

}  // namespace corral::lang
