// Go: go build with its caches in writable places, then the binary. Libraries are local
// module directories wired in with go.mod replace directives (nothing is downloaded).
#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

class Go : public LanguageHandler {
 public:
  const char* name() const override { return "go"; }
  std::vector<std::string> aliases() const override { return {"golang"}; }
  const char* binary() const override { return "/usr/bin/go"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/go", "version"}; }
  std::string source_file(const std::string&) const override { return "main.go"; }
  std::optional<std::vector<std::string>> compile_argv(const std::string& file, const Limits&) const override {
    return std::vector<std::string>{"/usr/bin/go", "build", "-o", "main", file};
  }
  std::vector<std::string> run_argv(const std::string&, const Limits&) const override { return {"./main"}; }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const override {
    std::string script =
        "set -e; cd /sandbox; [ -f go.mod ] || go mod init sandbox >/dev/null 2>&1; "
        "for d in \"$@\"; do m=$(sed -n 's/^module[[:space:]]*//p' \"$d/go.mod\"); "
        "[ -n \"$m\" ] || { echo \"not a Go module (no go.mod): $d\" >&2; exit 1; }; "
        "go mod edit -require=\"$m@v0.0.0\" -replace=\"$m=$d\"; echo \"added $m\"; done";
    std::vector<std::string> argv = {"/bin/sh", "-c", script, "go-install"};
    for (const auto& l : libs) argv.push_back(l.sandbox_path);
    return argv;
  }
  std::map<std::string, std::string> env(const Limits& l) const override {
    return {{"GOCACHE", "/tmp/go-cache"}, {"GOPATH", "/tmp/go"}, {"GOPROXY", "off"}, {"GOFLAGS", "-mod=mod"},
            {"CGO_ENABLED", "0"}, {"GOTOOLCHAIN", "local"}, {"GOMEMLIMIT", std::to_string(l.memory_bytes * 3 / 4)}};
  }
  // seccomp/profiles/go.json: the common base + epoll, eventfd (the netpoller) and splice.
  std::string seccomp_profile() const override { return "go"; }
};

}  // namespace

const LanguageHandler& go_language() {
  static const Go g;
  return g;
}

}  // namespace corral::lang
