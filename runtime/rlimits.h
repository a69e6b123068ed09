// Resource limits (setrlimit), exec side: core dumps off, largest file, open files, tasks;
// and where no cgroup holds the sandbox, per-process memory and CPU time as stand-ins.
#pragma once

#include <vector>

#include "runtime/launch_plan.h"
#include "runtime/protocol.h"
#include "src/core/policy.h"

namespace corral::runtime {

// Supervisor side: the rlimits a policy asks for. With a cgroup holding memory and CPU for
// the whole sandbox, the per-process stand-ins (RLIMIT_DATA, RLIMIT_CPU) are left off.
std::vector<LaunchPlan::Rlimit> rlimits_for(const Limits& limits, bool cgroup_enforced);
// Worker side: applies them (no allocation).
int apply_rlimits(const LaunchPlan& plan, ErrorPayload* err);

}  // namespace corral::runtime
