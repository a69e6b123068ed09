// JavaScript: node, libraries from local npm tarballs or package directories.
#include "src/lang/drivers/drivers.h"
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class JavaScript : public LanguageHandler {
 public:
  const char* name() const override { return "javascript"; }
  std::vector<std::string> aliases() const override { return {"js", "node", "nodejs"}; }
  const char* binary() const override { return "/usr/bin/node"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/node", "--version"}; }
  std::string source_file(const std::string&) const override { return "main.js"; }
  std::vector<std::string> run_argv(const std::string& file, const Limits&) const override {
    return {"/usr/bin/node", file};
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const override {
    std::vector<std::string> argv = {"/usr/bin/npm", "install", "--offline", "--no-audit", "--no-fund",
                                     "--no-save", "--prefix", kLibDir};
    for (const auto& l : libs) argv.push_back(l.sandbox_path);
    return argv;
  }
  std::map<std::string, std::string> env(const Limits& l) const override {
    return {{"NODE_PATH", std::string(kLibDir) + "/node_modules"},
            {"npm_config_cache", "/tmp/npm-cache"},
            {"npm_config_update_notifier", "false"},
            // V8 does not see the cgroup: size its heap to the sandbox's memory.
            {"NODE_OPTIONS", "--max-old-space-size=" + std::to_string(l.memory_bytes * 3 / 4 >> 20)}};
  }
  // seccomp/profiles/javascript.json: the common base + epoll, eventfd (libuv), inotify (fs.watch), pkeys (V8).
  std::string seccomp_profile() const override { return "javascript"; }
  std::optional<InteractiveDriver> interactive_driver() const override {
    const std::string dir = kDriverDir;
    return InteractiveDriver{
        {{dir + "/javascript_driver.js", kJavaScriptDriver, 0644}, {dir + "/javascript_relay.js", kJavaScriptRelay, 0644}},
        {"/usr/bin/node", dir + "/javascript_driver.js", kDriverSocket},
        {"/usr/bin/node", dir + "/javascript_relay.js", kDriverSocket}};
  }
};

}  // namespace

const LanguageHandler& javascript_language() {
  static const JavaScript j;
  return j;
}

}  // namespace corral::lang
