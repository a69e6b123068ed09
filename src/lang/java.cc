// Java: javac + java. The file is named after the public class, as javac requires.
#include <regex>

#include "src/lang/handlers.h"

namespace corral::lang {
namespace {

// The JVM cannot see the sandbox's cgroup (no cgroupfs inside), so it is told the memory
// size; serial GC and no perf-data file keep threads and /tmp writes down.
std::vector<std::string> jvm_flags(const Limits& l, const char* prefix) {
  return {std::string(prefix) + "-XX:MaxRAM=" + std::to_string(l.memory_bytes),
          std::string(prefix) + "-XX:+UseSerialGC", std::string(prefix) + "-XX:-UsePerfData",
          std::string(prefix) + "-XX:TieredStopAtLevel=1"};
}

class Java : public LanguageHandler {
 public:
  const char* name() const override { return "java"; }
  const char* binary() const override { return "/usr/bin/javac"; }
  std::vector<std::string> version_argv() const override { return {"/usr/bin/java", "-version"}; }
  std::string source_file(const std::string& code) const override { return public_class(code) + ".java"; }
  std::optional<std::vector<std::string>> compile_argv(const std::string& file, const Limits& l) const override {
    std::vector<std::string> argv = {"/usr/bin/javac"};
    for (auto& f : jvm_flags(l, "-J")) argv.push_back(f);
    argv.insert(argv.end(), {"-encoding", "UTF-8", "-d", ".", file});
    return argv;
  }
  std::vector<std::string> run_argv(const std::string& file, const Limits& l) const override {
    std::vector<std::string> argv = {"/usr/bin/java"};
    for (auto& f : jvm_flags(l, "")) argv.push_back(f);
    argv.insert(argv.end(), {"-cp", ".", file.substr(0, file.size() - 5)});
    return argv;
  }
  StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>&) const override {
    return Unsupported("java has no library installation in corral; mount jars and use them on the classpath",
                       "libraries");
  }
  void adjust_limits(Limits& l) const override {
    if (l.memory_bytes < (256ull << 20)) l.memory_bytes = 256ull << 20;  // the JVM will not start in less
  }
  // seccomp/profiles/java.json: the common base + epoll, eventfd and inotify (WatchService).
  std::string seccomp_profile() const override { return "java"; }

  // The name of the public top-level class, or Main. Comments and string literals are
  // blanked first, so "// public class Fake" does not count.
  static std::string public_class(const std::string& code) {
    static const std::regex re(R"(public\s+(?:(?:final|abstract|sealed|strictfp)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][A-Za-z0-9_$]*))");
    const std::string text = strip_comments_and_strings(code);
    std::smatch m;
    if (std::regex_search(text, m, re)) return m[1];
    return "Main";
  }

  static std::string strip_comments_and_strings(const std::string& code) {
    std::string out;
    out.reserve(code.size());
    for (size_t i = 0; i < code.size(); ++i) {
      char c = code[i];
      if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
        while (i < code.size() && code[i] != '\n') ++i;
        out += '\n';
      } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
        size_t end = code.find("*/", i + 2);
        i = end == std::string::npos ? code.size() : end + 1;
        out += ' ';
      } else if (c == '"' || c == '\'') {
        size_t j = i + 1;
        while (j < code.size() && code[j] != c && code[j] != '\n') j += code[j] == '\\' ? 2 : 1;
        i = j;
        out += ' ';
      } else {
        out += c;
      }
    }
    return out;
  }
};

}  // namespace

const LanguageHandler& java_language() {
  static const Java j;
  return j;
}

}  // namespace corral::lang
