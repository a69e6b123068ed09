#include "runtime/init.h"

#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/fds.h"
#include "runtime/mount_ns.h"
#include "runtime/protocol.h"
#include "runtime/worker.h"

namespace corral::runtime {
namespace {

constexpr int kCtlFd = 3;

[[noreturn]] void setup_failed(const ErrorPayload& err) {
  send_frame(kCtlFd, Frame::kSetupError, &err, sizeof err);
  _exit(1);
}

constexpr size_t kWorkerStack = 256 * 1024;
// How long a sandbox stays idle after an exec before init prepares the next worker.
constexpr long kPrepareDelayMs = 20;

struct SpawnContext {
  const LaunchPlan* plan;
  WorkerArgs args;
  int close_in_child;
};

int worker_entry(void* p) {
  auto* ctx = static_cast<SpawnContext*>(p);
  close(ctx->close_in_child);  // fd tables are not shared: this closes the worker's copy only
  run_worker(*ctx->plan, ctx->args);
}

struct PreparedContext {
  const LaunchPlan* plan;
  int sock;
  int close_in_child;
};

int prepared_entry(void* p) {
  auto* ctx = static_cast<PreparedContext*>(p);
  close(ctx->close_in_child);
  run_prepared_worker(*ctx->plan, ctx->sock);
}

void close_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

class Init {
 public:
  explicit Init(const LaunchPlan& plan) : plan_(plan) {}

  [[noreturn]] void serve() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigfd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd_ < 0) _exit(2);
    worker_stack_ = static_cast<char*>(
        mmap(nullptr, kWorkerStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0));
    if (worker_stack_ == MAP_FAILED) _exit(2);
    prepared_stack_ = static_cast<char*>(
        mmap(nullptr, kWorkerStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0));
    if (prepared_stack_ == MAP_FAILED) _exit(2);
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes_) != 0) sizes_ = {};
    // A sandbox made ahead of its first request (a pool's) gets its first worker ready once
    // it has been idle for a moment; one whose request follows at once (the CLI's, a
    // one-shot run's) is served by a worker made for it, never waiting for one being
    // prepared (a zygote's rehearses a run first).
    prepare_later();

    while (true) {
      // Negative fds are ignored by poll: a listener slot without a listener costs nothing.
      struct pollfd p[4] = {{kCtlFd, POLLIN, 0}, {sigfd_, POLLIN, 0}, {listener_, POLLIN, 0},
                            {detached_listener_, POLLIN, 0}};
      int n = poll(p, 4, prepare_timeout_ms());
      if (n < 0) {
        if (errno == EINTR) continue;
        _exit(2);
      }
      if (n == 0) {
        prepare_worker();
        continue;
      }
      if (p[1].revents) reap();
      if (p[2].revents & POLLIN) relay_violation(&listener_);
      else if (p[2].revents & (POLLHUP | POLLERR | POLLNVAL)) close_fd(&listener_);
      if (p[3].revents & POLLIN) relay_violation(&detached_listener_);
      else if (p[3].revents & (POLLHUP | POLLERR | POLLNVAL)) close_fd(&detached_listener_);
      if (p[0].revents) handle_control();
    }
  }

 private:
  void handle_control() {
    FrameHeader h;
    int fds[kMaxFds];
    int nfds = 0;
    // The supervisor is gone (or broke the protocol): PID 1 exits and the kernel kills
    // every process left in the namespace.
    if (recv_header(kCtlFd, &h, fds, &nfds) != 0) _exit(0);
    if (h.type == static_cast<uint32_t>(Frame::kKill)) {
      if (worker_ > 0) kill_all_but_detached();  // stragglers go when the worker is reaped
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      return;
    }
    if (h.type == static_cast<uint32_t>(Frame::kDetach)) {
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      // The worker may be exiting or gone already (its kExited is then on the way): nothing
      // to do.
      if (worker_ > 0 && worker_detachable_ && !is_exiting(worker_)) {
        detached_ = worker_;
        worker_ = 0;
        close_fd(&detached_listener_);
        detached_listener_ = listener_;
        listener_ = -1;
        DetachedPayload d = {detached_, 0};
        send_frame(kCtlFd, Frame::kDetached, &d, sizeof d);
      }
      return;
    }
    if (h.type != static_cast<uint32_t>(Frame::kExec)) _exit(3);
    start_exec(h.length, fds, nfds);
  }

  // An exec that failed before any worker existed: no worker will exit, so kExited (as if
  // exit 127) follows here — without it the supervisor would wait for one until its wall clock.
  void fail_exec(const char* step, int err, const char* detail) {
    ErrorPayload e;
    make_error(&e, step, err, detail);
    send_frame(kCtlFd, Frame::kExecFailed, &e, sizeof e);
    ExitPayload none = {};
    none.wait_status = 127 << 8;
    send_frame(kCtlFd, Frame::kExited, &none, sizeof none);
  }

  void start_exec(uint32_t length, int* fds, int nfds) {
    // Payload: ExecWire, strings, then room for the argv/envp pointer arrays.
    size_t map_len = exec_buffer_size(length);
    char* buf = static_cast<char*>(mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (buf == MAP_FAILED) _exit(4);
    if (length < sizeof(ExecWire) || read_full(kCtlFd, buf, length) != 0) _exit(4);
    ExecRequestView v;
    if (nfds != 3 || !decode_exec_request(buf, length, &v)) {
      fail_exec("decode exec request", EINVAL, "");
    } else if (worker_ > 0) {
      fail_exec("exec", EBUSY, "another exec is running in this sandbox");
    } else if ((v.flags & kExecDetach) && detached_ > 0) {
      fail_exec("exec", EBUSY, "a detached program is already running in this sandbox");
    } else {
      worker_detachable_ = (v.flags & kExecDetach) != 0;
      launch(v, fds, buf, length);
    }
    for (int i = 0; i < nfds; ++i) close(fds[i]);
    munmap(buf, map_len);
  }

  void launch(const ExecRequestView& v, const int* stdio, const char* request, uint32_t length) {
    worker_interprets_ = interprets(plan_, v.argv);
    int report_fd = -1;
    pid_t pid = -1;
    // A zygote sandbox's prepared worker is a copy of the template: exec'ing another program
    // from it would tear all that down first. A worker cloned for it is quicker; another is
    // prepared after this exec.
    if (prepared_ > 0 && plan_.interpret && !worker_interprets_) discard_prepared();
    if (prepared_ > 0) {
      // With the stdio fds: a cold sandbox's worker (sharing this memory) the request decoded
      // here, a zygote's the request as it came (see worker.h).
      int sent = plan_.interpret ? send_frame(prepared_sock_, Frame::kExec, request, length, stdio, 3)
                                 : send_frame(prepared_sock_, Frame::kExec, &v, sizeof v, stdio, 3);
      if (sent == 0) {
        pid = prepared_;
        report_fd = prepared_sock_;
        prepared_ = 0;
        prepared_sock_ = -1;
      } else {
        discard_prepared();
        preparing_ok_ = false;
      }
    }
    if (pid < 0) {
      int report[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report) != 0) {
        return fail_exec("socketpair", errno, "");
      }
      // posix_spawn's technique: the worker borrows init's memory (CLONE_VM) on a stack of
      // its own, and init waits (CLONE_VFORK) until it has exec'd or exited. No page tables
      // are copied, and no malloc or atfork handler runs. Credentials, rlimits, seccomp,
      // signal handlers, cwd and the fd table all stay per-task, so nothing the worker
      // changes about itself reaches init.
      SpawnContext ctx{&plan_, {v.cwd, v.argv, v.envp, {stdio[0], stdio[1], stdio[2]}, report[1]}, report[0]};
      if (worker_interprets_) {
        // A zygote sandbox's interpreter: the worker needs memory of its own to run it in,
        // so this is a real fork. corral-init is a fork of a single-threaded template, so
        // no lock can be held across it.
        ctx.args.interpret = true;
        pid = fork();
        if (pid == 0) worker_entry(&ctx);
      } else {
        pid = clone(worker_entry, worker_stack_ + kWorkerStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &ctx);
      }
      close(report[1]);
      if (pid < 0) {
        int e = errno;
        close(report[0]);
        return fail_exec("clone worker", e, "");
      }
      report_fd = report[0];
    }
    worker_ = pid;
    bool failed = false;
    // The worker sends its seccomp listener, then either execs (the socket closes on exec)
    // or reports why it could not.
    while (true) {
      FrameHeader h;
      int fds[kMaxFds];
      int nfds = 0;
      if (recv_header(report_fd, &h, fds, &nfds) != 0) break;
      if (h.type == kWorkerListener && nfds == 1) {
        close_fd(&listener_);
        listener_ = fds[0];
        continue;
      }
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      ErrorPayload e;
      if (h.type == kWorkerFailed && h.length == sizeof e && read_full(report_fd, &e, sizeof e) == 0) {
        send_frame(kCtlFd, Frame::kExecFailed, &e, sizeof e);
        failed = true;
      }
      break;
    }
    close(report_fd);
    if (!failed) send_frame(kCtlFd, Frame::kExecStarted, nullptr, 0);
  }

  // A worker prepared ahead of the next request (run_prepared_worker): made, set up and
  // filtered while the sandbox is idle, so that an exec request costs only its stdio, cwd
  // and execve. Made only while no exec and no detached program runs (see worker.h), at
  // most one at a time, and not after one has died unused (the next exec then clones a
  // worker that reports why).
  void prepare_worker() {
    prepare_at_ = {};
    if (!preparing_ok_ || !plan_.prepared_worker_allowed || prepared_ > 0 || worker_ > 0 || detached_ > 0) return;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    // A zygote sandbox's worker is a fork of init (itself a fork of a single-threaded
    // template, so glibc's fork is safe); a cold sandbox's shares init's memory on a stack of
    // its own (see worker.h).
    pid_t pid;
    if (plan_.interpret) {
      pid = fork();
      if (pid == 0) {
        close(sv[0]);
        run_prepared_worker(plan_, sv[1]);
      }
    } else {
      prepared_ctx_ = {&plan_, sv[1], sv[0]};
      pid = clone(prepared_entry, prepared_stack_ + kWorkerStack, CLONE_VM | SIGCHLD, &prepared_ctx_);
    }
    close(sv[1]);
    if (pid < 0) {
      close(sv[0]);
      return;
    }
    prepared_ = pid;
    prepared_sock_ = sv[0];
  }

  // Kills the prepared worker, unused (reaped as any other child, not as one that died).
  void discard_prepared() {
    kill(prepared_, SIGKILL);
    close_fd(&prepared_sock_);
    prepared_ = 0;
  }

  // After an exec: the next worker is prepared once the sandbox has been idle for a moment,
  // so that a sandbox destroyed right after its exec (a pool's, by default) never makes one.
  void prepare_later() {
    if (!preparing_ok_ || !plan_.prepared_worker_allowed) return;
    clock_gettime(CLOCK_MONOTONIC, &prepare_at_);
    prepare_at_.tv_nsec += kPrepareDelayMs * 1'000'000L;
    if (prepare_at_.tv_nsec >= 1'000'000'000L) prepare_at_.tv_sec++, prepare_at_.tv_nsec -= 1'000'000'000L;
  }

  int prepare_timeout_ms() const {
    if (prepare_at_.tv_sec == 0 && prepare_at_.tv_nsec == 0) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (prepare_at_.tv_sec - now.tv_sec) * 1000 + (prepare_at_.tv_nsec - now.tv_nsec) / 1'000'000;
    return ms < 0 ? 0 : static_cast<int>(ms);
  }

  void reap() {
    struct signalfd_siginfo si;
    while (read(sigfd_, &si, sizeof si) == sizeof si) {
    }
    bool done = false;
    bool detached_exited = false;
    while (true) {
      int st = 0;
      struct rusage ru;
      pid_t p = wait4(-1, &st, WNOHANG, &ru);
      if (p <= 0) break;
      if (p == prepared_) {  // died unused: set-up failed, or it was killed
        prepared_ = 0;
        close_fd(&prepared_sock_);
        preparing_ok_ = false;
      }
      if (p == detached_) {
        detached_ = 0;
        detached_exited = true;
        close_fd(&detached_listener_);
      }
      if (p == worker_) {
        done = true;
        exit_.wait_status = st;
        exit_.user_us = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
        exit_.sys_us = ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
        exit_.maxrss_kb = ru.ru_maxrss;
      }
    }
    // What a detached program left behind ends with it when no exec is running.
    if (detached_exited && worker_ == 0) {
      end_all_but_detached();
      prepare_later();
    }
    if (!done) return;
    if (worker_interprets_) {
      // Its memory may live on in a holder (see hold_memory in worker.cc): every process of
      // the exec is killed first, so none of them runs on, then the answer goes out, then
      // they are waited for. Nothing else is read from the supervisor until they are gone.
      kill_all_but_detached();
      worker_ = 0;
      send_frame(kCtlFd, Frame::kExited, &exit_, sizeof exit_);
      end_all_but_detached();
      close_fd(&listener_);
      prepare_later();
      return;
    }
    // An exec's processes end with it: daemons, double forks and stragglers included (the
    // detached program, if any, is not the exec's).
    end_all_but_detached();
    close_fd(&listener_);
    worker_ = 0;
    send_frame(kCtlFd, Frame::kExited, &exit_, sizeof exit_);
    prepare_later();
  }

  void relay_violation(int* listener) {
    alignas(16) static char notif_buf[4096];
    alignas(16) static char resp_buf[4096];
    if (sizes_.seccomp_notif == 0 || sizes_.seccomp_notif > sizeof notif_buf) return close_fd(listener);
    memset(notif_buf, 0, sizes_.seccomp_notif);
    auto* n = reinterpret_cast<struct seccomp_notif*>(notif_buf);
    if (ioctl(*listener, SECCOMP_IOCTL_NOTIF_RECV, n) != 0) {
      if (errno != ENOENT && errno != EINTR) close_fd(listener);
      return;
    }
    // Kill first: the syscall never runs, and the offender never returns to user code.
    kill(static_cast<pid_t>(n->pid), SIGKILL);
    // A detached program's violation is reported to the exec running at the time, if any
    // (an interactive session's cell runs in the detached interpreter).
    if (listener == &listener_ || worker_ > 0) {
      ViolationPayload v = {n->data.arch, n->data.nr, static_cast<int32_t>(n->pid), 0};
      send_frame(kCtlFd, Frame::kViolation, &v, sizeof v);
    }
    memset(resp_buf, 0, sizes_.seccomp_notif_resp);
    auto* r = reinterpret_cast<struct seccomp_notif_resp*>(resp_buf);
    r->id = n->id;
    r->error = -EPERM;
    ioctl(*listener, SECCOMP_IOCTL_NOTIF_SEND, r);  // ENOENT once the task is gone: fine
  }

  // SIGKILL to every process in the sandbox but init and the detached program, once.
  // Returns how many were still alive (zombies are not), or -1 if /proc cannot be read.
  // Without a detached program this is kill(-1). /proc lists thread-group leaders only,
  // and a kill reaches the whole group. Fixed buffers: init must not allocate.
  int kill_all_but_detached() {
    if (detached_ <= 0) return kill(-1, SIGKILL) == 0 ? 1 : 0;
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    alignas(8) static char entries[4096];
    int alive = 0;
    long got;
    while ((got = syscall(SYS_getdents64, dir, entries, sizeof entries)) > 0) {
      for (long off = 0; off < got;) {
        auto* e = reinterpret_cast<struct dirent64*>(entries + off);
        off += e->d_reclen;
        pid_t pid = 0;
        const char* c = e->d_name;
        for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
        if (*c != '\0' || pid <= 1 || pid == detached_ || is_zombie(pid)) continue;
        if (kill(pid, SIGKILL) == 0) ++alive;
      }
    }
    close(dir);
    return got < 0 ? -1 : alive;
  }

  // State and flags (fields 3 and 9) of /proc/<pid>/stat; false if the process is gone.
  static bool read_stat(pid_t pid, char* state, unsigned long* flags) {
    char path[32] = "/proc/";
    char digits[12];
    int n = 0;
    for (pid_t v = pid; v > 0 && n < 11; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
    size_t at = 6;
    while (n > 0) path[at++] = digits[--n];
    memcpy(path + at, "/stat", 6);
    static char stat[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t len = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (len <= 0) return false;
    stat[len] = '\0';
    // "pid (comm) S ppid pgrp session tty tpgid flags ...": the command may hold spaces and
    // parentheses; the state follows the last ')'.
    char* p = strrchr(stat, ')');
    if (!p || p[1] != ' ') return false;
    *state = p[2];
    p += 3;
    for (int field = 4; field <= 8 && p; ++field) p = strchr(p + 1, ' ');
    *flags = p ? strtoul(p + 1, nullptr, 10) : 0;
    return true;
  }

  static bool is_zombie(pid_t pid) {
    char state;
    unsigned long flags;
    return !read_stat(pid, &state, &flags) || state == 'Z' || state == 'X';
  }

  // PF_EXITING (include/linux/sched.h) is set first thing in do_exit, before the process's
  // files are closed: output closed by an exit is not a readiness signal.
  static bool is_exiting(pid_t pid) {
    char state;
    unsigned long flags;
    return !read_stat(pid, &state, &flags) || state == 'Z' || state == 'X' || (flags & 0x4);
  }

  // Kills and reaps every process but init and the detached program (all of them when
  // there is none, or when /proc cannot be read).
  void end_all_but_detached() {
    while (detached_ > 0) {
      int alive = kill_all_but_detached();
      if (alive < 0) break;  // cannot tell the processes apart: none survives
      pid_t p;
      while ((p = wait4(-1, nullptr, WNOHANG, nullptr)) > 0) {
        if (p == detached_) detached_ = 0;
      }
      if (alive == 0 && detached_ > 0) return;
      struct timespec pause = {0, 1'000'000};  // let the killed become zombies
      nanosleep(&pause, nullptr);
    }
    kill(-1, SIGKILL);
    while (wait4(-1, nullptr, 0, nullptr) > 0 || errno == EINTR) {
    }
    detached_ = 0;
    close_fd(&detached_listener_);
  }

  const LaunchPlan& plan_;
  int sigfd_ = -1;
  int listener_ = -1;
  char* worker_stack_ = nullptr;
  char* prepared_stack_ = nullptr;    // a cold sandbox's prepared worker runs on it
  PreparedContext prepared_ctx_ = {};  // what it starts from (read once, at its start)
  pid_t worker_ = 0;
  bool worker_detachable_ = false;
  bool worker_interprets_ = false;  // the worker runs the zygote's interpreter (a real fork)
  pid_t prepared_ = 0;          // the worker prepared for the next request, 0 if none
  int prepared_sock_ = -1;      // init's end of its request socket
  bool preparing_ok_ = true;    // false once one died unused
  struct timespec prepare_at_ = {};  // when to prepare one, {} if not due
  pid_t detached_ = 0;          // the detached program (kDetach), 0 if none
  int detached_listener_ = -1;  // its seccomp listener
  ExitPayload exit_ = {};
  struct seccomp_notif_sizes sizes_ = {};
};

// corral-init is a clone of the supervisor, never exec'd, so its argument and environment
// areas are the supervisor's: a command line may hold a token. Zero both (their bounds are
// fields 48-51 of /proc/self/stat) before anything else can look at this process.
void scrub_inherited_args_and_env() {
  char buf[2048];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  char* p = strrchr(buf, ')');  // the command name may contain spaces and parentheses
  if (!p) return;
  unsigned long v[52] = {};
  int field = 2;  // p points just past field 2
  for (char* tok = strtok(p + 1, " "); tok && field < 51; tok = strtok(nullptr, " ")) {
    v[++field] = strtoul(tok, nullptr, 10);
  }
  if (field < 51) return;
  auto zero = [](unsigned long start, unsigned long end) {
    if (start && end > start && end - start < (64ul << 20)) memset(reinterpret_cast<void*>(start), 0, end - start);
  };
  zero(v[48], v[49]);
  zero(v[50], v[51]);
}

}  // namespace

void init_main(const LaunchPlan& plan, int ctl_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  scrub_inherited_args_and_env();
  // A zygote's fork joins its cgroups through fds corral opened (before they are closed
  // below); the first failure is reported once the control socket is in place.
  ErrorPayload attach_err;
  bool attach_failed = false;
  for (int fd : plan.cgroup_attach_fds) {
    if (!attach_failed && write(fd, "0", 1) != 1) make_error(&attach_err, "join cgroup", errno, ""), attach_failed = true;
  }
  // Keep only the control socket (as fd 3); stdio becomes /dev/null so that nothing of the
  // supervisor's stays open in the sandbox.
  if (ctl_fd != kCtlFd && dup3(ctl_fd, kCtlFd, O_CLOEXEC) < 0) _exit(1);
  if (close_fds_from(kCtlFd + 1) != 0) _exit(1);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) _exit(1);
  for (int i = 0; i < 3; ++i) dup2(null_fd, i);
  if (null_fd > 2) close(null_fd);

  if (attach_failed) setup_failed(attach_err);
  ErrorPayload err;
  FrameHeader h;
  int fds[kMaxFds];
  int nfds = 0;
  if (recv_header(kCtlFd, &h, fds, &nfds) != 0 || h.type != static_cast<uint32_t>(Frame::kGo) || nfds != 0) _exit(1);

  // Until now this process had the supervisor's host ids; from here on it is the
  // sandbox's uid 0, an unprivileged id on the host.
  // Raw syscalls, never glibc's set*id: glibc broadcasts those to every thread it has on
  // its list, and this process inherited the list of a possibly multi-threaded supervisor
  // whose other threads do not exist here (it waits for them forever).
  if (syscall(SYS_setresgid, 0, 0, 0) != 0) make_error(&err, "setresgid", errno, ""), setup_failed(err);
  if (syscall(SYS_setresuid, 0, 0, 0) != 0) make_error(&err, "setresuid", errno, ""), setup_failed(err);
  if (sethostname(plan.hostname.c_str(), plan.hostname.size()) != 0) {
    make_error(&err, "sethostname", errno, plan.hostname.c_str()), setup_failed(err);
  }
  if (build_root_filesystem(plan, &err) != 0) setup_failed(err);
  // Not dumpable: /proc/1 is closed to user code, and nothing can ptrace init.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) make_error(&err, "set non-dumpable", errno, ""), setup_failed(err);

  // The supervisor made the cgroup meanwhile. Joining it (when it sent attach files) comes
  // before anything of the sandbox's runs; the cgroup namespace after it, so that its
  // cgroup becomes the root of the sandbox's cgroup view.
  if (recv_header(kCtlFd, &h, fds, &nfds) != 0 || h.type != static_cast<uint32_t>(Frame::kPlaced)) _exit(1);
  for (int i = 0; i < nfds; ++i) {
    if (write(fds[i], "0", 1) != 1) make_error(&err, "join cgroup", errno, ""), setup_failed(err);
    close(fds[i]);
  }
  if (unshare(CLONE_NEWCGROUP) != 0) make_error(&err, "unshare cgroup namespace", errno, ""), setup_failed(err);
  if (send_frame(kCtlFd, Frame::kReady, nullptr, 0) != 0) _exit(1);
  Init(plan).serve();
}

}  // namespace corral::runtime
