#include "backends/registry.h"

#include <cstdlib>

#include "backends/docker/docker_executor.h"
#include "backends/podman/podman_executor.h"
#include "runtime/native_executor.h"

namespace corral {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = getenv(name);
  return v && *v ? v : fallback;
}

// "nofile=1024:1024,nproc=4096:4096" (as podman's --ulimit, comma-separated).
StatusOr<std::vector<docker::Ulimit>> parse_ulimits(const std::string& text) {
  std::vector<docker::Ulimit> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    const std::string item = text.substr(i, j - i);
    size_t eq = item.find('='), colon = item.find(':');
    char* end = nullptr;
    docker::Ulimit u;
    if (eq == std::string::npos || eq == 0) return InvalidArgument("CORRAL_PODMAN_ULIMITS", "expected NAME=SOFT[:HARD]: " + item);
    u.name = item.substr(0, eq);
    u.soft = strtoll(item.c_str() + eq + 1, &end, 10);
    u.hard = colon == std::string::npos ? u.soft : strtoll(item.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || u.soft < 0 || u.hard < u.soft) {
      return InvalidArgument("CORRAL_PODMAN_ULIMITS", "expected NAME=SOFT[:HARD] with SOFT <= HARD: " + item);
    }
    out.push_back(u);
    i = j + 1;
  }
  return out;
}

StatusOr<std::string> image_for(const BackendOptions& options) {
  std::string image = options.image.empty() ? env_or("CORRAL_IMAGE", "") : options.image;
  if (image.empty()) {
    return InvalidArgument("image", "the " + options.name + " backend needs an image (--image NAME or CORRAL_IMAGE)");
  }
  return image;
}

}  // namespace

std::vector<std::string> backend_names() { return {"native", "docker", "podman"}; }

StatusOr<std::unique_ptr<Executor>> make_executor(const BackendOptions& options) {
  if (options.name == "native") {
    runtime::NativeOptions native;
    native.short_lived = options.short_lived;
    native.prepared_netns = options.prepared_netns;
    return std::unique_ptr<Executor>(new runtime::NativeExecutor(native));
  }
  if (options.name == "docker") {
    docker::EngineOptions e;
    ASSIGN_OR_RETURN(e.image, image_for(options));
    // DOCKER_HOST as the docker CLI reads it.
    e.endpoint = options.endpoint.empty() ? env_or("DOCKER_HOST", "") : options.endpoint;
    ASSIGN_OR_RETURN(auto ex, docker::DockerExecutor::connect(e));
    return std::unique_ptr<Executor>(std::move(ex));
  }
  if (options.name == "podman") {
    podman::PodmanOptions p;
    ASSIGN_OR_RETURN(p.image, image_for(options));
    p.endpoint = options.endpoint.empty() ? env_or("CONTAINER_HOST", "") : options.endpoint;
    p.runtime = env_or("CORRAL_PODMAN_RUNTIME", p.runtime);
    p.init = env_or("CORRAL_PODMAN_INIT", "1") != "0";
    if (const char* u = getenv("CORRAL_PODMAN_ULIMITS")) {
      ASSIGN_OR_RETURN(p.ulimits, parse_ulimits(u));
    }
    ASSIGN_OR_RETURN(auto ex, podman::connect(p));
    return std::unique_ptr<Executor>(std::move(ex));
  }
  return InvalidArgument("backend", "unknown backend '" + options.name + "' (expected one of: native, docker, podman)");
}

}  // namespace corral
