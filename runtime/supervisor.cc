#include "runtime/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "runtime/protocol.h"
#include "src/core/unique_fd.h"
#include "seccomp/compiler.h"

namespace corral::runtime {
namespace {

constexpr int kKillGraceMs = 2000;  // how long init gets to confirm a kill
constexpr double kCpuCheckMs = 20;  // how often the CPU budget is checked

double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

using Fd = UniqueFd;

std::string encode_request(const ExecRequest& req, const std::string& cwd, const std::vector<std::string>& env,
                           bool detach) {
  std::string strings;
  strings.append(cwd).push_back('\0');
  for (const auto& a : req.argv) strings.append(a).push_back('\0');
  for (const auto& e : env) strings.append(e).push_back('\0');
  ExecWire w{static_cast<uint32_t>(req.argv.size()), static_cast<uint32_t>(env.size()),
             static_cast<uint32_t>(strings.size()), detach ? kExecDetach : 0u};
  std::string out(reinterpret_cast<const char*>(&w), sizeof w);
  out += strings;
  return out;
}

// One captured stream: keeps the first `cap` bytes, counts and discards the rest.
struct Capture {
  Fd fd;  // read end of the pipe
  std::string* data;
  bool* truncated;
  const std::function<void(std::string_view)>* stream;
  bool open = true;
};

// Writes to a pipe whose reader may be gone without raising SIGPIPE in this process.
ssize_t write_nosigpipe(int fd, const char* p, size_t n) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = write(fd, p, n);
  int e = errno;
  if (w < 0 && e == EPIPE) {
    struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // consume the pending SIGPIPE
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = e;
  return w;
}

}  // namespace

StatusOr<ExecOutcome> supervise_exec(const SandboxChannel& ch, const Policy& policy, const ExecRequest& req,
                                     const std::vector<std::string>& env, SandboxCgroup* cgroup, bool detach) {
  if (req.argv.empty() || req.argv[0].empty()) return InvalidArgument("argv", "must name a program");
  const uint64_t wall_ms = req.wall_ms.value_or(policy.limits.wall_ms);
  const uint64_t cap = req.output_bytes.value_or(policy.limits.output_bytes);
  const std::string cwd = req.cwd.empty() ? policy.workdir : req.cwd;
  if (cwd[0] != '/') return InvalidArgument("cwd", "must be an absolute path");
  const std::string payload = encode_request(req, cwd, env, detach);
  if (payload.size() > kMaxFrame) return InvalidArgument("argv", "argv and env exceed " + std::to_string(kMaxFrame) + " bytes");

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return SysError("pipe2 stdin");
  Fd in_r(in_pipe[0]), in_w(in_pipe[1]);
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return SysError("pipe2 stdout");
  Fd out_w(out_pipe[1]);
  ExecOutcome out;
  ExecResult& r = out.result;
  CgroupCounters base;
  if (cgroup && !cgroup->take_unused()) {
    auto c = cgroup->read();
    if (!c.ok()) return c.status();
    base = *c;
    RETURN_IF_ERROR(cgroup->reset_peak());
  }
  const uint64_t cpu_budget_us = policy.limits.cpu_ms * 1000;
  Capture streams[2] = {{Fd(out_pipe[0]), &r.stdout_data, &r.stdout_truncated, &req.on_stdout},
                        {Fd(), &r.stderr_data, &r.stderr_truncated, &req.on_stderr}};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return SysError("pipe2 stderr");
  Fd err_w(err_pipe[1]);
  streams[1].fd.reset(err_pipe[0]);
  for (int fd : {in_w.get(), out_pipe[0], err_pipe[0]}) fcntl(fd, F_SETFL, O_NONBLOCK);

  const double start = now_ms();
  const int child_fds[3] = {in_r.get(), out_w.get(), err_w.get()};
  int sr = send_frame(ch.ctl, Frame::kExec, payload.data(), static_cast<uint32_t>(payload.size()), child_fds, 3);
  if (sr != 0) {
    out.sandbox_broken = true;
    if (ch.await_ready) {
      Status ready = ch.await_ready();  // init gave up during setup: its reason, not EPIPE
      if (!ready.ok()) return ready;
    }
    return SysError("send exec request to corral-init", -sr);
  }
  if (ch.await_ready) {
    Status ready = ch.await_ready();
    if (!ready.ok()) return ready;  // the caller's sandbox failed its setup: it is broken
  }
  in_r.reset();
  out_w.reset();
  err_w.reset();

  size_t stdin_off = 0;
  if (req.stdin_data.empty()) in_w.reset();

  bool exited = false;
  bool started = false, detach_sent = false, detached = false;
  int32_t detached_pid = 0;
  bool kill_sent = false;
  double kill_deadline = 0;
  const double deadline = start + static_cast<double>(wall_ms);
  ExitPayload exit_info{};
  std::string pids_note;
  // Uninitialised: only the pages read() fills are touched (zeroing 64 KiB per exec cost
  // 16 page faults).
  constexpr size_t kBufSize = 64 * 1024;
  std::unique_ptr<char[]> buf(new char[kBufSize]);

  const std::string oom_message = "out of memory: the sandbox hit its memory limit of " +
                                  std::to_string(policy.limits.memory_bytes) + " bytes and was ended";
  double next_cpu_check = cpu_budget_us && cgroup ? start + kCpuCheckMs : 0;
  auto request_kill = [&](ExecStatus why, std::string message) {
    r.set_status(why, std::move(message));
    if (!kill_sent) {
      kill_sent = true;
      kill_deadline = now_ms() + kKillGraceMs;
      if (send_frame(ch.ctl, Frame::kKill, nullptr, 0) != 0) out.sandbox_broken = true;
    }
  };

  while (!(exited && !streams[0].open && !streams[1].open) && !detached) {
    if (out.sandbox_broken) break;
    if (detach && started && !exited && !kill_sent && !detach_sent && !streams[0].open && !streams[1].open) {
      // Output closed, still running: it is ready. init answers kDetached, or kExited if
      // the program exited in between.
      detach_sent = true;
      if (send_frame(ch.ctl, Frame::kDetach, nullptr, 0) != 0) out.sandbox_broken = true;
      continue;
    }
    double now = now_ms();
    if (!kill_sent && now >= deadline) {
      request_kill(ExecStatus::kTimeout, "wall clock limit of " + std::to_string(wall_ms) + " ms reached");
    }
    if (kill_sent && now >= kill_deadline) {
      out.sandbox_broken = true;
      break;
    }
    if (next_cpu_check && now >= next_cpu_check && !kill_sent) {
      next_cpu_check = now + kCpuCheckMs;
      auto c = cgroup->read();
      if (c.ok() && c->cpu_user_us + c->cpu_sys_us - base.cpu_user_us - base.cpu_sys_us >= cpu_budget_us) {
        request_kill(ExecStatus::kTimeout,
                     "CPU time budget of " + std::to_string(policy.limits.cpu_ms) + " ms used up");
      }
    }
    struct pollfd p[6];
    int n = 0;
    int ctl_i = -1, pid_i = -1, in_i = -1, oom_i = -1, s_i[2] = {-1, -1};
    if (cgroup && cgroup->oom_fd() >= 0 && !exited) oom_i = n, p[n++] = {cgroup->oom_fd(), cgroup->oom_poll_events(), 0};
    if (!exited) ctl_i = n, p[n++] = {ch.ctl, POLLIN, 0};
    if (!exited) pid_i = n, p[n++] = {ch.pidfd, POLLIN, 0};
    if (in_w.get() >= 0) in_i = n, p[n++] = {in_w.get(), POLLOUT, 0};
    for (int s = 0; s < 2; ++s) {
      if (streams[s].open) s_i[s] = n, p[n++] = {streams[s].fd.get(), POLLIN, 0};
    }
    double until = kill_sent ? kill_deadline : deadline;
    if (next_cpu_check && !kill_sent) until = std::min(until, next_cpu_check);
    int timeout = static_cast<int>(until - now) + 1;
    if (exited) timeout = kKillGraceMs;  // remaining output is already in the pipes
    int pr = poll(p, n, timeout < 0 ? 0 : timeout);
    if (pr < 0) {
      if (errno == EINTR) continue;
      return SysError("poll");
    }
    if (pr == 0 && exited) {
      out.sandbox_broken = true;  // a pipe stayed open after every process was killed
      break;
    }
    for (int s = 0; s < 2; ++s) {
      if (s_i[s] < 0 || !p[s_i[s]].revents) continue;
      Capture& c = streams[s];
      while (true) {
        ssize_t got = read(c.fd.get(), buf.get(), kBufSize);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) break;
        if (got <= 0) {
          c.open = false;
          c.fd.reset();
          break;
        }
        size_t keep = 0;
        if (c.data->size() < cap) keep = std::min<size_t>(static_cast<size_t>(got), cap - c.data->size());
        if (keep) {
          c.data->append(buf.get(), keep);
          if (*c.stream) (*c.stream)(std::string_view(buf.get(), keep));
        }
        if (keep < static_cast<size_t>(got)) {
          *c.truncated = true;
          request_kill(ExecStatus::kOutputLimit, std::string(s == 0 ? "stdout" : "stderr") +
                                                     " passed the output limit of " + std::to_string(cap) + " bytes");
        }
      }
    }
    if (oom_i >= 0 && p[oom_i].revents) {
      auto c = cgroup->read();  // also clears the notification
      if (c.ok() && c->oom_kills > base.oom_kills) {
        // An OOM ends the whole sandbox, on every cgroup version: with memory.oom.group (v2)
        // the kernel takes corral-init along with everything else, and v1 matches that. A
        // sandbox is never reused in an unknown state after the kernel started killing in it.
        r.set_status(ExecStatus::kOom, oom_message);
        out.sandbox_broken = true;
        break;
      }
    }
    if (in_i >= 0 && p[in_i].revents) {
      ssize_t w = write_nosigpipe(in_w.get(), req.stdin_data.data() + stdin_off, req.stdin_data.size() - stdin_off);
      if (w > 0) stdin_off += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || stdin_off == req.stdin_data.size()) in_w.reset();
    }
    if (pid_i >= 0 && p[pid_i].revents) {
      out.sandbox_broken = true;  // init died
      break;
    }
    if (ctl_i >= 0 && p[ctl_i].revents) {
      FrameHeader h;
      int fds[kMaxFds];
      int nfds = 0;
      if (recv_header(ch.ctl, &h, fds, &nfds) != 0) {
        out.sandbox_broken = true;
        break;
      }
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      switch (static_cast<Frame>(h.type)) {
        case Frame::kExecStarted:
          started = true;
          break;
        case Frame::kDetached: {
          DetachedPayload d{};
          if (!detach_sent || h.length != sizeof d || read_full(ch.ctl, &d, sizeof d) != 0) {
            out.sandbox_broken = true;
            break;
          }
          detached = true;
          detached_pid = d.pid;
          break;
        }
        case Frame::kExecFailed: {
          ErrorPayload e{};
          if (h.length != sizeof e || read_full(ch.ctl, &e, sizeof e) != 0) {
            out.sandbox_broken = true;
            break;
          }
          std::string msg = std::string(e.step) + (e.detail[0] ? std::string(" ") + e.detail : "") + ": " +
                            std::strerror(e.err);
          r.set_status(ExecStatus::kSetupError, msg);
          break;
        }
        case Frame::kViolation: {
          ViolationPayload v{};
          if (h.length != sizeof v || read_full(ch.ctl, &v, sizeof v) != 0) {
            out.sandbox_broken = true;
            break;
          }
          r.set_status(ExecStatus::kSeccompViolation,
                       "syscall " + seccomp::syscall_name(v.arch, v.nr) + " denied by the seccomp profile");
          break;
        }
        case Frame::kExited:
          if (h.length != sizeof exit_info || read_full(ch.ctl, &exit_info, sizeof exit_info) != 0) {
            out.sandbox_broken = true;
            break;
          }
          exited = true;
          in_w.reset();
          break;
        default:
          out.sandbox_broken = true;
      }
    }
  }

  r.usage.wall_ms = now_ms() - start;
  if (cgroup) {
    auto c = cgroup->read();
    if (c.ok()) {
      r.usage.cpu_user_ms = (c->cpu_user_us - base.cpu_user_us) / 1000.0;
      r.usage.cpu_sys_ms = (c->cpu_sys_us - base.cpu_sys_us) / 1000.0;
      r.usage.peak_memory_bytes = c->peak_memory_bytes;
      // Checked before the exit status: an OOM kill shows up as SIGKILL, and with
      // memory.oom.group it may have taken corral-init too.
      if (c->oom_kills > base.oom_kills) {
        r.set_status(ExecStatus::kOom, oom_message);
        out.sandbox_broken = true;
      }
      if (c->pids_refused > base.pids_refused) {
        pids_note = std::to_string(c->pids_refused - base.pids_refused) + " fork(s) refused at the pids limit of " +
                    std::to_string(policy.limits.pids);
      }
    }
  }
  if (detached) {
    r.set_status(ExecStatus::kOk, "running detached as pid " + std::to_string(detached_pid));
    return out;
  }
  if (!exited) {
    // init never confirmed: the caller destroys the sandbox, which kills everything in it.
    r.set_status(ExecStatus::kInternalError, "corral-init stopped responding");
    return out;
  }
  int st = exit_info.wait_status;
  if (!cgroup) {
    r.usage.cpu_user_ms = exit_info.user_us / 1000.0;
    r.usage.cpu_sys_ms = exit_info.sys_us / 1000.0;
    r.usage.peak_memory_bytes = static_cast<uint64_t>(exit_info.maxrss_kb) * 1024;
  }
  if (WIFEXITED(st)) {
    r.exit_code = WEXITSTATUS(st);
    r.set_status(r.exit_code == 0 ? ExecStatus::kOk : ExecStatus::kNonzeroExit);
  } else if (WIFSIGNALED(st)) {
    r.signal = WTERMSIG(st);
    if (r.signal == SIGXCPU) r.set_status(ExecStatus::kTimeout, "CPU time limit reached");
    if (r.signal == SIGXFSZ) r.set_status(ExecStatus::kSignaled, "file size limit reached (SIGXFSZ)");
    r.set_status(ExecStatus::kSignaled, std::string("killed by signal ") + sigabbrev_np(r.signal));
  }
  if (!pids_note.empty()) r.message += (r.message.empty() ? "" : "; ") + pids_note;
  return out;
}

}  // namespace corral::runtime
