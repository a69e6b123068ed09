// Resource limits (setrlimit), exec side: core dumps off, largest file, open files, tasks
// and, until a cgroup driver enforces memory for the whole sandbox, per-process data size.
#pragma once

#include <vector>

#include "runtime/launch_plan.h"
#include "runtime/protocol.h"
#include "src/core/policy.h"

namespace corral::runtime {

// Supervisor side: the rlimits a policy asks for.
std::vector<LaunchPlan::Rlimit> rlimits_for(const Limits& limits);
// Worker side: applies them (no allocation).
int apply_rlimits(const LaunchPlan& plan, ErrorPayload* err);

}  // namespace corral::runtime
