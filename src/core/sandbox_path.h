// Paths inside a sandbox as callers name them: absolute, or relative to the workdir. One set
// of rules for every backend and every surface, so that a path refused by one is refused by
// all: not empty, no NUL byte, no "." or ".." component, not the root itself. Backends then
// resolve what passes beneath the sandbox root (the native one with RESOLVE_IN_ROOT).
#pragma once

#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral {

// "/a/b/c" or "b/c" (with workdir "/a") -> {"a", "b", "c"}; kInvalidArgument naming `field`.
StatusOr<std::vector<std::string>> split_sandbox_path(const std::string& field, const std::string& workdir,
                                                      const std::string& path);

// The same rules at the edge (HTTP bodies, service requests), before any sandbox is chosen,
// plus a length cap of 4096 bytes.
Status check_sandbox_path(const std::string& path, const std::string& field);

}  // namespace corral
