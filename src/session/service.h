// Service: what the servers expose, in one place — one-shot executions, a registry of named
// sessions (with a cap, idle TTL and max age), the language list, and admission control.
// The HTTP API (src/http) and the MCP server (src/mcp) translate their wire formats into
// these calls and back; neither keeps sandboxes of its own.
//
// Thread-safe. Every call may run concurrently with every other.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "src/core/executor.h"
#include "src/session/session.h"

namespace corral {

struct ServiceOptions {
  BackendOptions backend;             // which Executor sandboxes run on
  size_t max_sessions = 64;           // open sessions at once; beyond: kResourceExhausted
  size_t max_concurrent = 4;          // executions running at once; beyond: kResourceExhausted
  uint64_t session_idle_ttl_ms = 10 * 60 * 1000;  // default for sessions that give none
  uint64_t session_max_age_ms = 60 * 60 * 1000;
  uint64_t max_timeout_ms = 5 * 60 * 1000;        // requests asking for more are refused
  // Where library names given by requests are looked up (wheels, npm tarballs, gems...):
  // corral installs from local sources only. Empty: requests may not name libraries.
  std::string library_dir;
  // Used for sessions and one-shot runs; null: the service's executor creates and destroys.
  SandboxSource* source = nullptr;
  // Not owned; must outlive the service. Set: used instead of make_executor(backend) (tests
  // and fuzzing drive the servers on an in-memory executor).
  Executor* executor = nullptr;
};

// Limits and policy a request may set; unset fields keep the service's defaults.
struct RequestLimits {
  std::optional<uint64_t> timeout_ms;
  std::optional<uint64_t> memory_bytes;
  std::optional<std::string> security_preset;  // a scanner preset name (security_policy.h)
};

struct ExecuteRequest {
  std::string language;
  std::string code;
  std::vector<std::string> libraries;  // names resolved in ServiceOptions::library_dir
  std::vector<FileEntry> files;        // written beneath the workdir before the code runs
  std::string stdin_data;
  RequestLimits limits;
  std::function<void(std::string_view)> on_stdout;  // optional streaming
  std::function<void(std::string_view)> on_stderr;
};

struct SessionRequest {
  std::string language;
  bool interactive = false;  // state persists across runs (python, javascript)
  RequestLimits limits;
  std::optional<uint64_t> idle_ttl_ms;
};

struct SessionInfo {
  std::string id;
  std::string language;
  bool interactive = false;
  uint64_t age_ms = 0;
  uint64_t runs = 0;
};

class Service {
 public:
  // Errors when the backend cannot be created.
  static StatusOr<std::unique_ptr<Service>> create(ServiceOptions options);
  ~Service();  // closes every session

  // One sandbox, one run, destroyed afterwards. kInvalidArgument names the bad field
  // ("language", "timeout_ms", "libraries[1]", "files[0].path"); kResourceExhausted when
  // max_concurrent executions are already running.
  StatusOr<ExecResult> execute(const ExecuteRequest& request);

  // A new session; returns its id (unguessable, 128 random bits as hex).
  StatusOr<std::string> open_session(const SessionRequest& request);
  // kNotFound naming the id when there is no such session (or it expired).
  StatusOr<std::shared_ptr<Session>> session(const std::string& id);
  Status close_session(const std::string& id);
  std::vector<SessionInfo> sessions() const;

  // Runs in a session, counted against max_concurrent like execute().
  StatusOr<ExecResult> run(const std::string& id, const std::string& code, const RunOptions& options = {});
  StatusOr<ExecResult> command(const std::string& id, const std::string& command, const RunOptions& options = {});
  // Installs libraries (names resolved in library_dir) into a session; counted like run().
  StatusOr<ExecResult> install(const std::string& id, const std::vector<std::string>& libraries);

  // [{"name","version","available","compiled","file"}...] for every language handler.
  nlohmann::json languages() const;
  // Executions running now, and by final status since start (for /metrics).
  size_t running() const;
  std::map<std::string, uint64_t> executions_by_status() const;

  // Stops accepting work, closes every session (destroying its sandbox).
  void shutdown();

  Executor& executor() { return *executor_; }
  const ServiceOptions& options() const { return options_; }

 private:
  explicit Service(ServiceOptions options, std::unique_ptr<Executor> executor);
  // The rest is the implementation's (service.cc).
  struct State;
  ServiceOptions options_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<State> state_;
};

}  // namespace corral
