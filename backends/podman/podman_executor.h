// The Podman backend: the Docker executor on Podman's API service (`podman system service`,
// Docker-compatible endpoints), differing only where Podman does:
//   - the workdir is a plain tmpfs (Podman's archive API enters the container's mount
//     namespace, and its local volumes cannot be size-capped without project quota);
//   - the seccomp profile is passed as a file path (its API reads "seccomp=" as a path);
//   - explicit ulimits (nofile 1024, nproc 4096 by default: a root without CAP_SYS_RESOURCE
//     cannot raise them to Podman's defaults) and an explicit OCI runtime (runc by default:
//     crun fails on hybrid cgroup v1/v2 hosts). Both are configurable.
#pragma once

#include <memory>

#include "backends/docker/docker_executor.h"

namespace corral::podman {

struct PodmanOptions {
  std::string endpoint;  // empty: unix:///run/podman/podman.sock
  std::string image;
  std::string runtime = "runc";
  std::vector<docker::Ulimit> ulimits = {{"nofile", 1024, 1024}, {"nproc", 4096, 4096}};
  // An init as PID 1 reaping orphans: the engine's init_path (tools/engines points it at
  // tini-static; Debian's podman has no catatonit). false: PID 1 is the keep-alive itself.
  bool init = true;
  std::string allowlist_network;
  std::string attach_container;
  // Where translated seccomp profiles are written for the service to read (same host).
  std::string seccomp_file_dir = "/run/corral/podman-seccomp";
  bool keep_template = true;  // see docker::EngineOptions::keep_template
};

docker::EngineOptions engine_options(const PodmanOptions& options);
StatusOr<std::unique_ptr<docker::DockerExecutor>> connect(const PodmanOptions& options);

}  // namespace corral::podman
