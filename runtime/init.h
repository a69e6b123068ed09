// corral-init: PID 1 of every native sandbox. It is the clone3 child of the supervisor (the
// corral binary is never exec'd inside a sandbox), so it starts with full capabilities over
// the sandbox's fresh namespaces and none over the host's.
//
// Life: close inherited fds, wait for "go" (id maps written), become uid 0 of the user
// namespace, set the hostname, build the root filesystem, become non-dumpable, say "ready",
// then serve exec requests: fork a worker per request, relay seccomp violations, reap every
// process, and when an exec's main process exits kill whatever it left behind before
// reporting the exit. It exits when the supervisor's end of the socket closes, which ends
// the pid namespace and with it every process in the sandbox.
//
// Runs after a raw clone3 of a possibly multi-threaded process: must not allocate.
#pragma once

#include "runtime/launch_plan.h"

namespace corral::runtime {

[[noreturn]] void init_main(const LaunchPlan& plan, int ctl_fd);

}  // namespace corral::runtime
