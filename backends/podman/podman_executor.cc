#include "backends/podman/podman_executor.h"

namespace corral::podman {

docker::EngineOptions engine_options(const PodmanOptions& options) {
  docker::EngineOptions e;
  e.flavor = "podman";
  e.endpoint = options.endpoint.empty() ? "unix:///run/podman/podman.sock" : options.endpoint;
  e.image = options.image;
  e.runtime = options.runtime;
  e.ulimits = options.ulimits;
  e.init = options.init;
  e.workdir_volume = false;
  e.seccomp_file_dir = options.seccomp_file_dir;
  e.allowlist_network = options.allowlist_network;
  e.attach_container = options.attach_container;
  e.keep_template = options.keep_template;
  return e;
}

StatusOr<std::unique_ptr<docker::DockerExecutor>> connect(const PodmanOptions& options) {
  return docker::DockerExecutor::connect(engine_options(options));
}

}  // namespace corral::podman
