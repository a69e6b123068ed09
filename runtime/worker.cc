#include "runtime/worker.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/caps.h"
#include "runtime/fds.h"
#include "runtime/protocol.h"
#include "runtime/rlimits.h"
#include "runtime/seccomp_install.h"

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
  // Not the RT signals the C library keeps for itself (sigaction refuses them, and errno is
  // shared with init in a worker that shares its memory: see run_prepared_worker).
  const int first_rt = SIGRTMIN;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP || (sig >= 32 && sig < first_rt)) continue;
    sigaction(sig, &dfl, nullptr);
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
// Only where the filter allows clone and pause (LaunchPlan::holder_allowed).
alignas(16) char g_holder_stack[16384];

int hold_memory(void*) {
  for (;;) syscall(SYS_pause);
}

// After stdio (and, for run_worker, the cwd): rlimits, no_new_privs, capabilities, the
// sandbox user, every fd above the report socket (fd 3) closed, dumpability, and last the
// filter, whose listener (if any) goes to init over the report socket.
void drop_privileges_and_filter(const LaunchPlan& plan, int report, bool dumpable) {
  ErrorPayload err;
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
  if (dumpable && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
    make_error(&err, "set dumpable", errno, ""), report_and_exit(report, err);
  }
  int listener = install_seccomp(plan, &err);
  if (listener == -1) report_and_exit(report, err);
  if (listener >= 0) {
    if (send_frame(report, static_cast<Frame>(kWorkerListener), nullptr, 0, &listener, 1) != 0) _exit(127);
    close(listener);
  }
}

[[noreturn]] void run_program(const LaunchPlan& plan, char* const* argv, char* const* envp, const char* cwd,
                              int report, bool interpret) {
  if (interpret) {
    // The report socket closes as it would on execve: init then reports the exec started.
    close(report);
    int status = plan.interpret(argv, envp, cwd);
    if (status >= 0) {
      if (plan.holder_allowed) {
        for (int fd = 0; fd < 3; ++fd) close(fd);  // the output ends here, not with the holder
        clone(hold_memory, g_holder_stack + sizeof g_holder_stack, CLONE_VM | SIGCHLD, nullptr);
      }
      _exit(status);
    }
    // Not an argv the interpreter serves: exec it like any other program. The report
    // socket is gone, so a failure can only be an exit status (127, as a shell reports it).
    exec_program(argv, envp);
    _exit(127);
  }
  exec_program(argv, envp);
  ErrorPayload err;
  make_error(&err, "execve", errno, argv[0]);
  report_and_exit(report, err);
}

}  // namespace

bool interprets(const LaunchPlan& plan, char* const* argv) {
  return plan.interpret && strcmp(argv[0], plan.interpreter_path.c_str()) == 0 && plan.interpret_accepts(argv);
}

size_t exec_buffer_size(uint32_t length) { return length + 2 * sizeof(char*) * (length / 2 + 2) + 64; }

bool decode_exec_request(char* buf, uint32_t length, ExecRequestView* out) {
  if (length < sizeof(ExecWire)) return false;
  ExecWire w;
  memcpy(&w, buf, sizeof w);
  char* strings = buf + sizeof w;
  const size_t slen = length - sizeof w;
  if (w.strings_len != slen || slen == 0 || strings[slen - 1] != '\0' || w.argc < 1) return false;
  // ptrs: [cwd, argv..., NULL, envp..., NULL]
  char** ptrs = reinterpret_cast<char**>(buf + ((length + 15) & ~size_t{15}));
  const size_t needed = 1 + size_t{w.argc} + w.envc;
  size_t count = 0;
  for (size_t off = 0; off < slen && count <= needed; off += strlen(strings + off) + 1) {
    if (count < needed) ptrs[count + (count > w.argc ? 1 : 0)] = strings + off;
    ++count;
  }
  if (count != needed) return false;
  ptrs[1 + w.argc] = nullptr;
  ptrs[2 + w.argc + w.envc] = nullptr;
  *out = {ptrs[0], ptrs + 1, ptrs + 2 + w.argc, w.flags};
  return true;
}

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
  drop_privileges_and_filter(plan, report, args.interpret);
  run_program(plan, args.argv, args.envp, args.cwd, report, args.interpret);
}

void run_prepared_worker(const LaunchPlan& plan, int sock) {
  if (plan.prefault) plan.prefault(sock);
  ErrorPayload err;
  int report = sock;
  reset_signals();
  if (setsid() < 0) make_error(&err, "setsid", errno, ""), report_and_exit(report, err);
  // fd 3 is init's control socket in this copy of its fd table: the request socket takes
  // its place, and every fd above it (the rest of init's) is closed with the privileges.
  if (report != 3) {
    if (dup3(report, 3, O_CLOEXEC) < 0) make_error(&err, "dup3 report", errno, ""), report_and_exit(report, err);
    report = 3;
  }
  drop_privileges_and_filter(plan, report, plan.interpret != nullptr);
  // Unless the request is here already (it then waits for no rehearsal).
  struct pollfd pending = {report, POLLIN, 0};
  if (plan.interpret_prepare && poll(&pending, 1, 0) == 0) plan.interpret_prepare();

  // Waiting for the request. stdio is init's /dev/null until then.
  FrameHeader h;
  int fds[kMaxFds];
  int nfds = 0;
  if (recv_header(report, &h, fds, &nfds) != 0) _exit(0);  // init let it go unused
  const bool shared = plan.interpret == nullptr;  // see worker.h
  if (h.type != static_cast<uint32_t>(Frame::kExec) || nfds != 3 || (shared && h.length != sizeof(ExecRequestView))) {
    make_error(&err, "decode exec request", EPROTO, ""), report_and_exit(report, err);
  }
  ExecRequestView v;
  if (shared) {
    // The request decoded in init's memory, which this worker shares: its pointers.
    if (read_full(report, &v, sizeof v) != 0) make_error(&err, "read exec request", EPROTO, ""), report_and_exit(report, err);
  } else {
    void* map = mmap(nullptr, exec_buffer_size(h.length), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) make_error(&err, "map exec request", errno, ""), report_and_exit(report, err);
    char* buf = static_cast<char*>(map);
    if (read_full(report, buf, h.length) != 0 || !decode_exec_request(buf, h.length, &v)) {
      make_error(&err, "decode exec request", EINVAL, ""), report_and_exit(report, err);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (dup3(fds[i], i, 0) < 0) make_error(&err, "dup2 stdio", errno, ""), report_and_exit(report, err);
    close(fds[i]);
  }
  if (chdir(v.cwd) != 0) make_error(&err, "chdir", errno, v.cwd), report_and_exit(report, err);
  run_program(plan, v.argv, v.envp, v.cwd, report, interprets(plan, v.argv));
}

}  // namespace corral::runtime
