// LanguageHandler: what corral knows about running code in one language — the source file
// it goes in, how it is compiled (if at all) and run, how libraries are installed, and what
// the runtime needs from the sandbox. Handlers are data and argv builders; running them is
// runner.h's job, on any Executor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/executor.h"
#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral::lang {

// Where things live inside the sandbox (all under the writable workdir).
inline constexpr char kWorkdir[] = "/sandbox";
inline constexpr char kLibDir[] = "/sandbox/.corral-lib";       // installed libraries
inline constexpr char kLibSourceDir[] = "/corral-libsrc";        // local library sources, read-only
inline constexpr char kCorralDir[] = "/sandbox/.corral";         // corral's own helper files
inline constexpr char kPlotDir[] = "/sandbox/.corral/plots";     // captured figures
inline constexpr char kOutDir[] = "/sandbox/out";                // files returned as artifacts

// Interactive sessions (src/session/interactive.h): the language's driver — its interpreter
// running a small server that holds a session's state (variables, imports, open files) — is
// started once with Executor::exec_detached and listens on kDriverSocket; each run is a
// short exec of the relay, which hands the code to the driver and waits for it. The framed
// protocol between the two is documented in src/lang/drivers/drivers.h.
inline constexpr char kDriverDir[] = "/sandbox/.corral/driver";
inline constexpr char kDriverSocket[] = "/sandbox/.corral/driver/driver.sock";

struct InteractiveDriver {
  std::vector<FileEntry> files;          // the driver's and the relay's scripts
  std::vector<std::string> driver_argv;  // closes its stdout and stderr once it listens
  // Followed by: the code file, the result file, the cell timeout in ms, the grace in ms
  // between the interrupt and the kill.
  std::vector<std::string> relay_argv;
};

struct LibrarySource {
  std::string spec;          // as the user gave it
  std::string sandbox_path;  // where a local source is mounted inside; empty for a name
};

class LanguageHandler {
 public:
  virtual ~LanguageHandler() = default;
  virtual const char* name() const = 0;
  virtual std::vector<std::string> aliases() const { return {}; }
  // The program a host needs for this language (checked by `corral languages`).
  virtual const char* binary() const = 0;
  virtual std::vector<std::string> version_argv() const = 0;

  // The file the code is written to, relative to the workdir. Java's depends on the code.
  virtual std::string source_file(const std::string& code) const = 0;
  // Compile step, or nullopt for interpreted languages (wall limit: compile_wall_ms()).
  virtual std::optional<std::vector<std::string>> compile_argv(const std::string& /*file*/,
                                                                  const Limits& /*limits*/) const {
    return std::nullopt;
  }
  virtual std::vector<std::string> run_argv(const std::string& file, const Limits& limits) const = 0;
  // Installs local library sources into kLibDir; kUnsupported where the language has no
  // such mechanism.
  virtual StatusOr<std::vector<std::string>> install_argv(const std::vector<LibrarySource>& libs) const = 0;
  // Environment for every step (caches in writable places, library paths, runtime sizing).
  virtual std::map<std::string, std::string> env(const Limits& /*limits*/) const { return {}; }
  // Adjustments a runtime needs (JVM and Go start many threads, compilers need time).
  virtual void adjust_limits(Limits& /*limits*/) const {}
  virtual uint64_t compile_wall_ms() const { return 60'000; }
  // Files written into the sandbox before each run (plot capture hooks and the like).
  virtual std::vector<FileEntry> support_files() const { return {}; }
  virtual std::string seccomp_profile() const { return "default"; }
  // The interactive driver, or nullopt where the language has none.
  virtual std::optional<InteractiveDriver> interactive_driver() const { return std::nullopt; }
};

// By name or alias ("python", "py", "js", "node", "c++", "golang", "R", ...), case-insensitive.
const LanguageHandler* find_language(const std::string& name);
std::vector<const LanguageHandler*> all_languages();
// "python, javascript, ..." for error messages.
std::string language_names();

}  // namespace corral::lang
