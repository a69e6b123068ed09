// Capabilities, exec side (runs in the worker just before execve; must not allocate).
// User code keeps no capability in any set: bounding and ambient sets are emptied while
// the worker still holds CAP_SETPCAP, securebits are locked so that no later uid change or
// exec of a root-owned file can give any back, and after the switch to the sandbox user the
// permitted, effective and inheritable sets are cleared with libcap.
#pragma once

#include "runtime/launch_plan.h"
#include "runtime/protocol.h"

namespace corral::runtime {

// Before the uid switch: bounding set, ambient set, securebits.
int drop_capability_bounds(const LaunchPlan& plan, ErrorPayload* err);
// After the uid switch: permitted, effective and inheritable all empty.
int clear_capabilities(const LaunchPlan& plan, ErrorPayload* err);

}  // namespace corral::runtime
