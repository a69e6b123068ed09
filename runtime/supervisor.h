// Supervisor side of one exec: sends the request to corral-init with fresh stdio pipes, then
// runs one poll loop until the exec is over — feeding stdin, draining stdout/stderr into
// capped buffers (reading on past the cap so the writer never blocks), enforcing the wall
// clock and CPU budget, watching for OOM kills, and turning init's frames (started, failed,
// violation, exited) into an ExecResult.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/cgroup.h"
#include "src/core/executor.h"

namespace corral::runtime {

struct SandboxChannel {
  int ctl = -1;    // control socket to corral-init
  int pidfd = -1;  // corral-init itself: readable when it has died
  // When corral-init has not yet reported that the sandbox is ready: waits for that report
  // (it comes before anything about the exec). The request is sent first, so init finds it
  // queued the moment its setup is done instead of waiting for a round trip.
  std::function<Status()> await_ready;
};

struct ExecOutcome {
  ExecResult result;
  // init stopped answering (or died): the sandbox is unusable and must be destroyed.
  bool sandbox_broken = false;
};

// `env` is the complete environment ("K=V") for the program. With a cgroup, usage is the
// difference of its counters across the exec, OOM kills are watched as they happen, and the
// CPU-time budget is enforced; without one, usage comes from wait4's rusage.
//
// `detach`: once the program has closed its stdout and stderr while still running, it is
// handed to init as the sandbox's detached program and the exec ends there: status ok,
// exit_code -1, `message` "running detached as pid N" (see Executor::exec_detached).
StatusOr<ExecOutcome> supervise_exec(const SandboxChannel& ch, const Policy& policy, const ExecRequest& req,
                                     const std::vector<std::string>& env, SandboxCgroup* cgroup,
                                     bool detach = false);

}  // namespace corral::runtime
