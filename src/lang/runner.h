// Running code (not argv) in a fresh sandbox on any Executor: write the source file, install
// local libraries, compile, run — each step its own exec with its own limits — and return
// the result of the step that decided the outcome (ExecResult.stage says which).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/executor.h"
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
};

// Bad input (unknown language, a library given by name, a missing path) is a Status error
// naming the field; everything that happened inside the sandbox is in the ExecResult.
StatusOr<ExecResult> run_code(Executor& executor, const RunRequest& request);

// The policy run_code would use (exposed for tests and `corral run --json`).
StatusOr<Policy> policy_for(const LanguageHandler& lang, const RunRequest& request,
                            std::vector<LibrarySource>* libs);

}  // namespace corral::lang
