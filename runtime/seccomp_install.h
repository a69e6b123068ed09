// seccomp, exec side: installs the sandbox's compiled filter as the worker's very last step
// before execve. When the profile has "kill" actions the filter is loaded with a listener
// (SECCOMP_FILTER_FLAG_NEW_LISTENER): corral-init receives each violation, kills the
// offender and reports the syscall by name.
#pragma once

#include "runtime/launch_plan.h"
#include "runtime/protocol.h"

namespace corral::runtime {

// Returns the listener fd (>= 0), -2 when the profile has no kill actions, or -1 on error.
int install_seccomp(const LaunchPlan& plan, ErrorPayload* err);

}  // namespace corral::runtime
