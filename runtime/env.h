// The environment a sandboxed program sees: built from scratch, never inherited. Defaults
// (PATH, HOME, LANG...), then the variables the policy lets through from the caller's
// environment by name, then the policy's own, then the request's.
#pragma once

#include <string>
#include <vector>

#include "src/core/executor.h"

namespace corral::runtime {

StatusOr<std::vector<std::string>> build_environment(const Policy& policy, const ExecRequest& req);

}  // namespace corral::runtime
