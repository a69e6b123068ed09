// Policy -> Docker Engine API container config, as a pure function (no engine needed, unit
// tested). Fail closed: a policy field the engine cannot honour is an error naming the field,
// never silently dropped.
//
// How each field is honoured:
//   limits.wall_ms, output_bytes     by the executor, per exec (the engine has no such limit)
//   limits.cpu_ms                    refused unless 0: the engine has no per-exec CPU budget
//   limits.cpu                       NanoCpus
//   limits.memory_bytes              Memory = MemorySwap (no swap), at least 6 MiB (Docker's floor)
//   limits.pids                      PidsLimit
//   limits.file_size_bytes           ulimit fsize
//   limits.open_files                ulimit nofile
//   limits.disk_bytes                the writable places: the workdir gets 3/4, /tmp 1/4 (tmpfs);
//                                    the root filesystem is read-only
//   network none | loopback          NetworkMode "none" (a fresh netns with only lo)
//   network allowlist                the operator's network named by allowlist_network, which
//                                    must enforce the list; refused when none is configured
//   mounts                           binds (absolute host paths) and sized tmpfs
//   env, env_passthrough             Env (passthrough values resolved by the caller)
//   seccomp                          SecurityOpt seccomp=<profile translated by seccomp_json.h>
//   hostname                         Hostname
//   rootfs                           refused unless "host": the image is the root filesystem
// Always: CapDrop ALL, no-new-privileges, read-only rootfs, private IPC, an init as PID 1
// reaping orphans, PID 1 as an unprivileged user other than the one user code runs as (so a
// timeout can `kill -KILL -1` every process of the sandbox user without ending the container).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral::docker {

struct Ulimit {
  std::string name;  // "nofile", "nproc", ...
  int64_t soft = 0, hard = 0;
};

// The uid:gid user code runs as (the same as the native backend's sandbox user), and the one
// PID 1 (the init and its keep-alive child) runs as.
inline constexpr char kSandboxUser[] = "1000:1000";
inline constexpr uint32_t kSandboxUid = 1000;
inline constexpr char kKeepaliveUser[] = "65534:65534";

struct ContainerOptions {
  std::string image;
  std::string runtime;          // HostConfig.Runtime ("runc"); empty: the engine's default
  std::vector<Ulimit> ulimits;  // engine-required ulimits; the policy's nofile/fsize replace same names
  bool init = true;             // HostConfig.Init (docker-init / the engine's init_path)
  // Docker's archive API cannot reach a tmpfs mount (it writes beneath it); a tmpfs-backed
  // local volume it can. Podman's can (it enters the container's mount namespace).
  bool workdir_volume = true;
  std::string volume_name;      // the workdir volume, when workdir_volume
  std::string allowlist_network;
  std::vector<std::string> keepalive = {"sleep", "infinity"};
  // The translated profile (seccomp_json.h), or the path of a file holding it (podman);
  // empty: refused (a container never runs unconfined).
  std::string seccomp_json;
  std::map<std::string, std::string> passthrough_env;  // env_passthrough names -> values
  std::map<std::string, std::string> labels;
};

uint64_t workdir_bytes(const Limits& limits);
uint64_t tmp_bytes(const Limits& limits);

// Body of POST /containers/create.
StatusOr<nlohmann::json> container_create_body(const Policy& policy, const ContainerOptions& options);
// Body of POST /volumes/create for the workdir (tmpfs, sized, owned by the sandbox user).
nlohmann::json workdir_volume_body(const Policy& policy, const ContainerOptions& options);
// The environment of every exec: policy env, passthrough values, then the request's own.
std::vector<std::string> exec_env(const Policy& policy, const std::map<std::string, std::string>& passthrough,
                                  const std::map<std::string, std::string>& request_env);

}  // namespace corral::docker
