// Ruby; libraries from local .gem files installed into the sandbox.
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class Ruby : public LanguageHandler {
 public:
  const char* name() const override { return "ruby"; }
  std::vector<std::string> aliases() const override { return {"rb"}; }
  const char* binary() const override { return "/usr/bin/ruby"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/ruby", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.rb"; }
  std::vector<std::string> run_argv(const std::string& file, const Limits&) const override {
    return {"/usr/bin/ruby", file};
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const override {
    std::vector<std::string> argv = {"/usr/bin/gem", "install", "--local", "--no-document", "--install-dir", kLibDir};
    for (const auto& l : libs) argv.push_back(l.sandbox_path);
    return argv;
  }
  std::map<std::string, std::string> env(const Limits&) const override {
    return {{"GEM_HOME", kLibDir}, {"GEM_PATH", kLibDir}};
  }
  // seccomp/profiles/ruby.json: the common base + eventfd (timer thread) and epoll (Ruby >= 3.3).
  std::string seccomp_profile() const override { return "ruby"; }
};

}  // namespace

const LanguageHandler& ruby_language() {
  static const Ruby r;
  return r;
}

}  // namespace corral::lang
