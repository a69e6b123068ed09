// Backend selection: one place that turns a backend name ("native", "docker", "podman")
// into an Executor. The CLI (--backend), sessions, pools and the servers all go through it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/core/executor.h"
#include "src/core/status.h"

namespace corral {

struct BackendOptions {
  std::string name = "native";  // native | docker | podman
  std::string image;            // container backends: the image sandboxes start from
  std::string endpoint;         // container backends: engine socket or URL; empty: the default
  bool short_lived = false;     // the process makes a sandbox or two and exits (the CLI)
  bool prepared_netns = false;  // native: see runtime::NativeOptions::prepared_netns
};

// An error naming the backend when it is unknown or cannot be reached.
StatusOr<std::unique_ptr<Executor>> make_executor(const BackendOptions& options);
// The names make_executor accepts.
std::vector<std::string> backend_names();

}  // namespace corral
