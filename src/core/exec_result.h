// ExecResult: what happened when a program ran in a sandbox. The status is the headline and
// the first status written wins: a run that hit its output cap and was then killed by the
// wall clock is an output_limit, because that is what happened first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "src/core/status.h"

namespace corral {

enum class ExecStatus {
  kOk,                 // exited 0
  kNonzeroExit,        // exited with another code
  kSignaled,           // killed by a signal it did not get from corral
  kTimeout,            // wall clock or CPU budget exhausted; corral killed it
  kOom,                // the kernel's OOM killer struck inside the sandbox
  kOutputLimit,        // stdout or stderr passed output_bytes; corral killed it
  kSeccompViolation,   // a syscall the profile kills on; `message` names it
  kPolicyViolation,    // refused before running (security policy scanner)
  kSetupError,         // the sandbox or the program could not be started; `message` says why
  kInternalError,      // corral itself failed
};

const char* exec_status_name(ExecStatus s);
std::optional<ExecStatus> exec_status_from_name(const std::string& name);

struct Usage {
  double wall_ms = 0;
  double cpu_user_ms = 0;
  double cpu_sys_ms = 0;
  uint64_t peak_memory_bytes = 0;
};

struct Artifact {
  std::string path;   // inside the sandbox
  std::string name;   // file name, e.g. "plot-001.png"
  std::string mime;
  uint64_t size = 0;  // of the file in the sandbox
  std::string bytes;  // raw; base64 in JSON; empty when truncated
  bool truncated = false;  // larger than the artifact cap: not returned
  uint32_t width = 0, height = 0;  // images, where known
};

class ExecResult {
 public:
  ExecStatus status() const { return status_.value_or(ExecStatus::kInternalError); }
  bool has_status() const { return status_.has_value(); }
  // Records `s` unless a status was already recorded; returns whether it took.
  bool set_status(ExecStatus s, std::string message = {});

  // Which step of a language run this is the result of: "install", "compile" or "run";
  // empty for a plain exec. A compile error is stage "compile" with the compiler's output.
  std::string stage;
  int exit_code = -1;  // -1 when the program did not exit normally
  int signal = 0;      // terminating signal, 0 if none
  std::string message;  // detail for non-ok statuses (the syscall, the setup step)
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  Usage usage;
  std::vector<Artifact> artifacts;
  // Interactive sessions: the repr of the run's last expression (Python repr(), JavaScript
  // util.inspect), when the code ended in an expression whose value is not None/undefined.
  std::optional<std::string> value;

  nlohmann::json to_json() const;
  static StatusOr<ExecResult> from_json(const nlohmann::json& j);

 private:
  std::optional<ExecStatus> status_;
};

// Base64 (RFC 4648, with padding), for artifact bytes in JSON.
std::string base64_encode(const std::string& in);
StatusOr<std::string> base64_decode(const std::string& in);

}  // namespace corral
