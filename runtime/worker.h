// The exec worker: forked by corral-init for each exec request, it turns itself into the
// user's program. The order is the security argument, so it lives in one function:
//
//   signals reset, setsid (no controlling tty: TIOCSTI has nothing to push into)
//   stdio from the request, cwd, rlimits
//   no_new_privs, bounding/ambient caps dropped, securebits locked
//   setresgid/setresuid to the sandbox user, remaining caps cleared
//   every fd but stdio and the report socket closed
//   seccomp filter installed (last: nothing after it needs a denied syscall)
//   execve (PATH searched in the sandbox)
//
// In a zygote sandbox an exec of the preloaded interpreter skips only the last step: the
// worker (then a real fork) closes the report socket and runs the program in the
// interpreter it already holds (LaunchPlan::interpret), after every step above.
//
// Runs in a process cloned from corral-init that shares its memory until execve (CLONE_VM |
// CLONE_VFORK); must not allocate.
#pragma once

#include "runtime/launch_plan.h"

namespace corral::runtime {

struct WorkerArgs {
  const char* cwd;
  char* const* argv;
  char* const* envp;
  int stdio[3];
  int report_fd;  // socket to init: listener fd, or an ErrorPayload if execve fails
  bool interpret = false;  // served by LaunchPlan::interpret instead of execve
};

// Report frames a worker sends to init over `report_fd`.
inline constexpr uint32_t kWorkerListener = 100;  // carries the seccomp listener fd
inline constexpr uint32_t kWorkerFailed = 101;    // ErrorPayload; the worker then exits

[[noreturn]] void run_worker(const LaunchPlan& plan, const WorkerArgs& args);

}  // namespace corral::runtime
