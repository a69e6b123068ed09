// C++: g++ -std=c++17 -O2, then the binary.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class Cpp : public LanguageHandler {
 public:
  const char* name() const override { return "cpp"; }
  std::vector<std::string> aliases() const override { return {"c++", "cxx"}; }
  const char* binary() const override { return "/usr/bin/g++"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/g++", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.cpp"; }
  std::optional<std::vector<std::string>> compile_argv(const std::string& file, const Limits&) const override {
    return std::vector<std::string>{"/usr/bin/g++", "-std=c++17", "-O2", "-pipe", "-o", "main", file, "-lm"};
  }
  std::vector<std::string> run_argv(const std::string&, const Limits&) const override { return {"./main"}; }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>&) const override {
    return Unsupported("cpp has no package manager in corral; mount header-only libraries instead", "libraries");
  }
  // seccomp/profiles/cpp.json: the common base only (g++ and the programs measured needed nothing more).
  std::string seccomp_profile() const override { return "cpp"; }
};

}  // namespace

const LanguageHandler& cpp_language() {
  static const Cpp c;
  return c;
}

}  // namespace corral::lang
