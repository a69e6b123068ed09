// Session: one long-lived sandbox for one language, on any Executor — what agent servers
// embed. Files written by one run are there for the next. It closes (destroying the sandbox
// and everything in it) when asked, when destroyed (RAII), or on its own when its idle TTL
// or maximum age passes; a call on a closed session is an error, never a silent new sandbox.
//
// Thread-safe: calls are serialised (a sandbox runs one program at a time).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/core/executor.h"
#include "src/lang/artifacts.h"
#include "src/lang/language.h"
#include "src/security/security_policy.h"
#include "src/session/interactive.h"

namespace corral {

// Where a session's sandbox comes from and goes back to. By default the executor creates
// one and destroys it on close; a Pool hands out one it created ahead of time and, on
// release, destroys it and refills in the background (never hands it to another session
// unless it was provably reset).
class SandboxSource {
 public:
  virtual ~SandboxSource() = default;
  virtual StatusOr<std::unique_ptr<Sandbox>> acquire(const SandboxSpec& spec) = 0;
  virtual Status release(std::unique_ptr<Sandbox> sandbox) = 0;
};

struct SessionOptions {
  std::string language = "python";
  Policy policy;
  uint64_t default_timeout_ms = 0;  // per run/command when the call gives none; 0: the policy's wall_ms
  uint64_t idle_ttl_ms = 0;         // close after this long without a call; 0: never
  uint64_t max_age_ms = 0;          // close this long after opening; 0: never
  // Figures (matplotlib, R) and files written to /sandbox/out come back with each run.
  bool capture_artifacts = true;
  lang::ArtifactOptions artifacts;
  // Scanned before anything runs: code that violates it is refused with status
  // policy_violation and a report; library installs are checked against it too.
  std::optional<security::SecurityPolicy> security;
  // Not owned; must outlive the session. Null: executor.create() / executor.destroy().
  SandboxSource* source = nullptr;
  // State persists across runs (variables, imports, functions, open files), like a notebook
  // kernel: runs go to one long-lived interpreter (see interactive.h for what survives a
  // timeout) and ExecResult.value carries the repr of a run's last expression. Languages
  // with a driver: python, javascript; the backend must support Executor::exec_detached.
  bool interactive = false;
};

struct RunOptions {
  std::vector<std::string> libraries;  // local paths on the host, installed first
  std::string stdin_data;
  std::optional<uint64_t> timeout_ms;
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> open(Executor& executor, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs `code` in the session's language (compiled first where the language compiles).
  StatusOr<ExecResult> run(const std::string& code, const RunOptions& options = {});
  // Runs a shell command line (/bin/sh -c) in the workdir.
  StatusOr<ExecResult> execute_command(const std::string& command, const RunOptions& options = {});
  // Copies local library sources in and installs them (the result of the install step).
  StatusOr<ExecResult> install(const std::vector<std::string>& libraries);

  Status put_files(const std::vector<FileEntry>& files);
  StatusOr<std::vector<FileEntry>> get_files(const std::vector<std::string>& paths, uint64_t max_bytes);
  // A host file or directory (recursively; symlinks are skipped, never followed) into the
  // sandbox at `sandbox_path`.
  Status copy_to_runtime(const std::string& host_path, const std::string& sandbox_path);
  // A regular file out of the sandbox to `host_path`. The sandbox side resolves beneath its
  // root; the host side is created with O_NOFOLLOW and never replaces a symlink.
  Status copy_from_runtime(const std::string& sandbox_path, const std::string& host_path,
                           uint64_t max_bytes = 64ull << 20);

  Status close();
  bool is_open() const;
  std::string language() const { return lang_->name(); }
  // Why the session closed itself ("idle TTL of 500 ms passed"), empty if it did not.
  std::string expired_reason() const;

 private:
  Session(Executor& ex, SessionOptions options, const lang::LanguageHandler& lang);
  Status usable_locked() const;
  void touch_locked();
  void watchdog();
  Status close_locked(std::string reason);
  uint64_t timeout_for(const RunOptions& o) const;
  std::optional<ExecResult> refuse_if_violating(const std::string& language, const std::string& code) const;

  Executor& ex_;
  SessionOptions options_;
  const lang::LanguageHandler* lang_;
  Policy policy_;
  std::unique_ptr<Sandbox> sandbox_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point opened_, last_used_;
  std::string closed_reason_;
  bool stopping_ = false;
  std::thread watchdog_;
  int lib_counter_ = 0;
  std::unique_ptr<InteractiveRunner> interactive_;  // set for interactive sessions
};

}  // namespace corral
