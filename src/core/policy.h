// Policy: what a sandbox may do, as plain data. It arrives as JSON (policy file, HTTP body)
// and is validated once at the edge: unknown keys are rejected and every error names the
// field ("limits.memory_bytes: must be at least 1048576"). Code below the edge can trust it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "src/core/status.h"

namespace corral {

struct Limits {
  uint64_t wall_ms = 30'000;               // wall clock per exec
  uint64_t cpu_ms = 0;                     // CPU-time budget per exec; 0 = none beyond wall_ms
  double cpu = 0;                          // CPU bandwidth in cores (0.5 = half a core); 0 = no cap
  uint64_t memory_bytes = 512ull << 20;    // whole sandbox, swap excluded
  uint64_t pids = 256;                     // tasks in the sandbox
  uint64_t output_bytes = 1ull << 20;      // per stream (stdout, stderr)
  uint64_t file_size_bytes = 64ull << 20;  // largest file a process may write (RLIMIT_FSIZE)
  uint64_t disk_bytes = 256ull << 20;      // writable layer + /tmp together
  uint64_t open_files = 256;               // RLIMIT_NOFILE
};

enum class NetworkMode {
  kNone,       // own network namespace, no interface up
  kLoopback,   // own network namespace, only lo up (the default)
  kAllowlist,  // egress to the listed host:port pairs only
};

struct NetworkPolicy {
  NetworkMode mode = NetworkMode::kLoopback;
  std::vector<std::string> allow;  // "host:port", only with kAllowlist
};

struct MountSpec {
  enum class Type { kBind, kTmpfs } type = Type::kBind;
  std::string source;  // host path (bind only)
  std::string target;  // absolute path inside the sandbox
  bool readonly = true;
  uint64_t size_bytes = 0;  // tmpfs only
};

struct Policy {
  Limits limits;
  NetworkPolicy network;
  std::vector<MountSpec> mounts;
  std::map<std::string, std::string> env;   // set in every exec
  std::vector<std::string> env_passthrough;  // names copied from the caller's environment
  std::string seccomp = "default";           // profile name or path to a profile JSON file
  std::string hostname = "corral";
  std::string language;                      // empty: none chosen (plain argv execution)
  std::string rootfs = "host";
  std::string workdir = "/sandbox";
  // On a host without usable cgroup controllers, run anyway with per-process rlimits only
  // (memory per process, no CPU bandwidth cap). Off by default: never silently weaker.
  bool allow_rlimit_fallback = false;

  // Strict parse: unknown keys, wrong types and out-of-range values are errors naming the
  // field. Missing keys keep their defaults.
  static StatusOr<Policy> from_json(const nlohmann::json& j);
  static StatusOr<Policy> from_json_text(const std::string& text);
  static StatusOr<Policy> from_file(const std::string& path);
  nlohmann::json to_json() const;
};

const char* network_mode_name(NetworkMode mode);

}  // namespace corral
