// InteractiveRunner: how an interactive session runs code — in one long-lived interpreter
// (the language's driver) whose state persists across runs, like a notebook kernel. It
// uses the Executor interface only: the driver is started once with exec_detached, and each
// run is one short exec of the relay, which hands the code to the driver over a unix socket
// inside the sandbox (protocol: src/lang/drivers/drivers.h). Files, commands and artifacts
// keep working around it: the driver is not an exec, so other execs run as usual.
//
// What survives a timeout: the relay interrupts the run (Python: KeyboardInterrupt; node:
// the vm breaks off the script) and, if it stops within the grace period, the interpreter
// and everything in it — variables, imports, open files, and whatever the interrupted code
// had done until then — are kept; the result is status timeout. If it does not stop (code
// that never returns to the interpreter), the interpreter is killed: the result is status
// timeout with a message saying the state is lost, and the next run starts a fresh
// interpreter (and says so). Processes a run starts end with the run, as with every exec.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "src/core/executor.h"
#include "src/lang/artifacts.h"
#include "src/lang/language.h"

namespace corral {

class InteractiveRunner {
 public:
  // How long a run that passed its timeout gets to stop after the interrupt.
  static constexpr uint64_t kInterruptGraceMs = 1000;

  InteractiveRunner(const lang::LanguageHandler& lang, lang::InteractiveDriver driver);

  // Writes the driver's files and starts it. A Status error if the backend cannot; a result
  // whose status is not ok (stage "driver") if the driver failed to start.
  StatusOr<ExecResult> start(Executor& ex, Sandbox& sb);

  // One run (stage "run"), starting a fresh driver first if the last one was lost.
  StatusOr<ExecResult> run(Executor& ex, Sandbox& sb, const std::string& code, const std::string& stdin_data,
                           const std::function<void(std::string_view)>& on_stdout,
                           const std::function<void(std::string_view)>& on_stderr, uint64_t timeout_ms,
                           const lang::ArtifactOptions* artifacts);

 private:
  StatusOr<StepResult> relay(Executor& ex, Sandbox& sb, std::vector<FileEntry> files, const std::string& after,
                             const std::string& stdin_data,
                             const std::function<void(std::string_view)>& on_stdout,
                             const std::function<void(std::string_view)>& on_stderr, uint64_t timeout_ms);
  StatusOr<ExecResult> restart(Executor& ex, Sandbox& sb, std::string* note);

  const lang::LanguageHandler& lang_;
  lang::InteractiveDriver driver_;
  bool running_ = false;
  std::string lost_;  // why the last driver is gone, said with the next run
};

}  // namespace corral
