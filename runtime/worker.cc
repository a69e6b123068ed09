#include "runtime/worker.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "runtime/caps.h"
#include "runtime/fds.h"
#include "runtime/rlimits.h"
#include "runtime/seccomp_install.h"
#include "seccomp/simulate.h"

namespace corral::runtime {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

[[noreturn]] void report_and_exit(int fd, const ErrorPayload& err) {
  send_frame(fd, static_cast<Frame>(kWorkerFailed), &err, sizeof err);
  _exit(127);
}

void reset_signals() {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &dfl, nullptr);  // fails harmlessly for the libc-reserved RT signals
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

const char* path_from_env(char* const* envp) {
  for (char* const* e = envp; *e; ++e) {
    if (strncmp(*e, "PATH=", 5) == 0) return *e + 5;
  }
  return kDefaultPath;
}

// execvpe without allocation: PATH comes from the request's environment, not corral's.
void exec_program(char* const* argv, char* const* envp) {
  const char* file = argv[0];
  if (strchr(file, '/')) {
    execve(file, argv, envp);
    return;
  }
  char candidate[PATH_MAX];
  int saved = ENOENT;
  const char* p = path_from_env(envp);
  while (true) {
    const char* end = strchrnul(p, ':');
    size_t dir_len = static_cast<size_t>(end - p);
    if (dir_len == 0) dir_len = 1, p = ".";  // empty element means the cwd
    if (dir_len + 1 + strlen(file) < sizeof candidate) {
      memcpy(candidate, p, dir_len);
      candidate[dir_len] = '/';
      strcpy(candidate + dir_len + 1, file);
      execve(candidate, argv, envp);
      if (errno == EACCES) saved = EACCES;
      else if (errno != ENOENT && errno != ENOTDIR) return;
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  errno = saved;
}

// An interpreting worker maps the zygote's whole heap (tens of MB): tearing that down at
// _exit takes 2-4 ms here, and the exit is reported only after it. So, its program done and
// its stdio closed, the worker first clones a holder that shares its memory (CLONE_VM, same
// credentials and seccomp filter, no stdio) and just waits: the worker's own exit is then
// quick, and corral-init, which kills every process of the exec at its end, answers before
// it waits for the holder to take the memory down. The holder runs no code of the program's.
alignas(16) char g_holder_stack[16384];

int hold_memory(void*) {
  for (;;) syscall(SYS_pause);
}

// Whether the filter lets the holder be made and wait: clone(CLONE_VM | SIGCHLD) and pause
// both allowed (a profile that denies either, or kills for it, gets the plain _exit).
bool holder_allowed(const LaunchPlan& plan) {
  if (!plan.seccomp) return true;
  for (const auto& [nr, arg0] : {std::pair<int, uint64_t>{SYS_clone, CLONE_VM | SIGCHLD}, {SYS_pause, 0}}) {
    struct seccomp_data d = {};
    d.nr = nr;
    d.arch = AUDIT_ARCH_X86_64;
    d.args[0] = arg0;
    auto ret = seccomp::simulate(plan.seccomp->filter, d);
    if (!ret.ok() || (*ret & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW) return false;
  }
  return true;
}

}  // namespace

void run_worker(const LaunchPlan& plan, const WorkerArgs& args) {
  ErrorPayload err;
  int report = args.report_fd;
  reset_signals();
  if (setsid() < 0) make_error(&err, "setsid", errno, ""), report_and_exit(report, err);

  for (int i = 0; i < 3; ++i) {
    if (dup2(args.stdio[i], i) < 0) make_error(&err, "dup2 stdio", errno, ""), report_and_exit(report, err);
  }
  // The report socket moves to fd 3 (close-on-exec); everything above it is closed below.
  if (report != 3) {
    if (dup3(report, 3, O_CLOEXEC) < 0) make_error(&err, "dup3 report", errno, ""), report_and_exit(report, err);
    report = 3;
  }
  if (chdir(args.cwd) != 0) make_error(&err, "chdir", errno, args.cwd), report_and_exit(report, err);
  if (apply_rlimits(plan, &err) != 0) report_and_exit(report, err);

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    make_error(&err, "set no_new_privs", errno, ""), report_and_exit(report, err);
  }
  if (drop_capability_bounds(plan, &err) != 0) report_and_exit(report, err);
  // Raw syscalls: see init.cc (glibc's set*id would wait for threads that are not here).
  if (syscall(SYS_setresgid, kSandboxGid, kSandboxGid, kSandboxGid) != 0) {
    make_error(&err, "setresgid", errno, ""), report_and_exit(report, err);
  }
  if (syscall(SYS_setresuid, kSandboxUid, kSandboxUid, kSandboxUid) != 0) {
    make_error(&err, "setresuid", errno, ""), report_and_exit(report, err);
  }
  if (clear_capabilities(plan, &err) != 0) report_and_exit(report, err);
  if (close_fds_from(4) != 0) make_error(&err, "close fds", errno, ""), report_and_exit(report, err);

  // A forked interpreter inherits init's non-dumpable memory (and changing uids above resets
  // dumpability anyway). A program exec'd here is dumpable again after execve; so is this
  // one, or its own /proc/self files would be closed to it. Nothing it could expose is
  // secret: its memory is the template's (see zygote.h).
  if (args.interpret && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
    make_error(&err, "set dumpable", errno, ""), report_and_exit(report, err);
  }
  const bool hold = args.interpret && holder_allowed(plan);
  int listener = install_seccomp(plan, &err);
  if (listener == -1) report_and_exit(report, err);
  if (listener >= 0) {
    if (send_frame(report, static_cast<Frame>(kWorkerListener), nullptr, 0, &listener, 1) != 0) _exit(127);
    close(listener);
  }
  if (args.interpret) {
    // The report socket closes as it would on execve: init then reports the exec started.
    close(report);
    int status = plan.interpret(args.argv, args.envp, args.cwd);
    if (status >= 0) {
      if (hold) {
        for (int fd = 0; fd < 3; ++fd) close(fd);  // the output ends here, not with the holder
        clone(hold_memory, g_holder_stack + sizeof g_holder_stack, CLONE_VM | SIGCHLD, nullptr);
      }
      _exit(status);
    }
    // Not an argv the interpreter serves: exec it like any other program. The report
    // socket is gone, so a failure can only be an exit status (127, as a shell reports it).
    exec_program(args.argv, args.envp);
    _exit(127);
  }
  exec_program(args.argv, args.envp);
  make_error(&err, "execve", errno, args.argv[0]);
  report_and_exit(report, err);
}

}  // namespace corral::runtime
