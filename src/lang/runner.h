// Running code (not argv) in a fresh sandbox on any Executor: write the source file, install
// local libraries, compile, run — each step its own exec with its own limits — and return
// the result of the step that decided the outcome (ExecResult.stage says which).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/executor.h"
#include "src/lang/artifacts.h"
#include "src/lang/language.h"

namespace corral::lang {

struct RunRequest {
  std::string language;
  std::string code;
  std::vector<std::string> libraries;  // local paths on the host (files or directories)
  std::string stdin_data;
  Policy policy;  // limits and the rest; the language adjusts what its runtime needs
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  bool collect_artifacts = false;  // figures and /sandbox/out files into ExecResult.artifacts
  ArtifactOptions artifact_options;
};

// Bad input (unknown language, a library given by name, a missing path) is a Status error
// naming the field; everything that happened inside the sandbox is in the ExecResult.
StatusOr<ExecResult> run_code(Executor& executor, const RunRequest& request);
// The same, leaving the sandbox to the caller (in *sandbox, when one was made) to destroy.
StatusOr<ExecResult> run_code(Executor& executor, const RunRequest& request, std::unique_ptr<Sandbox>* sandbox);

// The steps, on a sandbox that already exists (sessions run many programs in one): write
// the source, compile if the language compiles, run. And installing libraries.
StatusOr<ExecResult> compile_and_run(Executor& ex, Sandbox& sb, const LanguageHandler& lang, const std::string& code,
                                     const Limits& limits, const std::string& stdin_data,
                                     const std::function<void(std::string_view)>& on_stdout,
                                     const std::function<void(std::string_view)>& on_stderr, uint64_t wall_ms,
                                     const ArtifactOptions* artifacts = nullptr);
StatusOr<ExecResult> install_in(Executor& ex, Sandbox& sb, const std::vector<std::string>& argv, const Limits& limits);

// The policy run_code would use (exposed for tests and `corral run --json`).
StatusOr<Policy> policy_for(const LanguageHandler& lang, const RunRequest& request,
                            std::vector<LibrarySource>* libs);

}  // namespace corral::lang
