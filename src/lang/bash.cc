// Bash scripts.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class Bash : public LanguageHandler {
 public:
  const char* name() const override { return "bash"; }
  std::vector<std::string> aliases() const override { return {"sh", "shell"}; }
  const char* binary() const override { return "/bin/bash"; }
  std::vector<std::string> version_argv() const override { return {"/bin/bash", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.sh"; }
  std::vector<std::string> run_argv(const std::string& file, const Limits&) const override {
    return {"/bin/bash", file};
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>&) const override {
    return Unsupported("bash has no library installation; mount the tools you need", "libraries");
  }
  // seccomp/profiles/bash.json: the common base + every runtime's extras (scripts start them) + setting xattrs (cp -a).
  std::string seccomp_profile() const override { return "bash"; }
};

}  // namespace

const LanguageHandler& bash_language() {
  static const Bash b;
  return b;
}

}  // namespace corral::lang
