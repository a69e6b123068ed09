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
//
// A prepared worker (run_prepared_worker) takes the same steps in the same order, but ahead
// of its request: corral-init makes it while the sandbox is idle, and it waits, its filter
// installed, for the request that names stdio, cwd and argv. Only those three steps remain
// when the request comes, after seccomp: the filter must allow them (LaunchPlan::
// prepared_worker_allowed), or init does not prepare workers for the sandbox. It waits only
// while no other process of the sandbox user exists (init prepares one only when no exec
// and no detached program is running).
//   In a cold sandbox it shares init's memory (CLONE_VM, a stack of its own) and runs
// alongside init, so it touches nothing of init's but its own stack (and errno only on a
// failure, after which it exits): a copy of init's memory would cost a page-table copy, and
// a teardown at execve that grows with the supervisor's heap (tools/bench-pool measures an
// exec with and without a large one). The
// request reaches it decoded, as pointers into init's memory, which init keeps until the
// worker has exec'd or failed. Sharing init's memory, it is non-dumpable like init: no
// process of the sandbox user could read it even if one existed.
//   In a zygote sandbox it is a fork (it needs memory of its own to run the interpreter in),
// waits dumpable like an interpreting worker (its memory is the template's; see zygote.h),
// serves only a request its interpreter takes (init discards it for any other) and gets the
// request as the supervisor sent it.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Made by corral-init with one end of a socket pair: sets itself up as run_worker does,
// sends its seccomp listener, then reads one kExec frame from `sock` with the three stdio
// fds (an ExecRequestView in a cold sandbox, the supervisor's request in a zygote's; see
// above) and runs it. Exits quietly if the socket closes first.
[[noreturn]] void run_prepared_worker(const LaunchPlan& plan, int sock);

// An exec request's payload (ExecWire, then the strings), decoded in place: `buf` holds the
// `length` payload bytes and has room for exec_buffer_size(length) in all; the pointer
// arrays go after the payload. False if it is malformed. Allocation-free.
struct ExecRequestView {
  const char* cwd;
  char* const* argv;
  char* const* envp;
  uint32_t flags;
};
size_t exec_buffer_size(uint32_t length);
bool decode_exec_request(char* buf, uint32_t length, ExecRequestView* out);

// Whether an exec of `argv` in this sandbox runs in its zygote's interpreter.
bool interprets(const LaunchPlan& plan, char* const* argv);

}  // namespace corral::runtime
