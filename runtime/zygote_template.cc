// corral-zygote: the template process (see zygote.h). Started by corral as an unprivileged
// host uid with only its control socket (fd 3); imports the preload list once, then forks a
// new corral-init into fresh namespaces for every spawn request and reaps them as they end.
#include <dirent.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/init.h"
#include "runtime/launch_plan.h"
#include "runtime/protocol.h"
#include "runtime/zygote.h"
#include "runtime/zygote_python.h"
#include "seccomp/compiler.h"

namespace corral::runtime {
namespace {

constexpr int kCtl = 3;

void send_json(uint32_t type, const nlohmann::json& j, const int* fds = nullptr, int nfds = 0) {
  std::string text = j.dump();
  send_frame(kCtl, static_cast<Frame>(type), text.data(), static_cast<uint32_t>(text.size()), fds, nfds);
}

int thread_count() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// Reads one frame: type, JSON payload, fds. False at EOF (corral is gone).
bool read_request(uint32_t* type, nlohmann::json* body, std::vector<int>* fds) {
  FrameHeader h;
  int got[kMaxFds];
  int n = 0;
  if (recv_header(kCtl, &h, got, &n) != 0 || h.length > kMaxFrame) return false;
  fds->assign(got, got + n);
  std::string text(h.length, '\0');
  if (h.length && read_full(kCtl, text.data(), h.length) != 0) return false;
  *type = h.type;
  *body = nlohmann::json::parse(text, nullptr, false);
  return true;
}

// One spawn: the plan is built here (allocation is fine: this process is single-threaded),
// then clone3 makes the new corral-init, which never returns.
void spawn(const ZygoteOptions& options, const nlohmann::json& req, const std::vector<int>& fds) {
  auto fail = [&](const std::string& why) { send_json(kZygoteError, {{"error", why}}); };
  if (req.is_discarded() || fds.empty()) return fail("malformed spawn request");
  auto policy = Policy::from_json(req.value("policy", nlohmann::json::object()));
  if (!policy.ok()) return fail("policy: " + policy.status().to_string());
  rootfs::Rootfs rootfs;
  const nlohmann::json& r = req["rootfs"];
  rootfs.name = r.value("name", "");
  rootfs.layers = r.value("layers", std::vector<std::string>{});
  rootfs.ro_binds = r.value("ro_binds", std::vector<std::string>{});
  rootfs.env = r.value("env", std::vector<std::string>{});
  rootfs.workdir = r.value("workdir", "");
  auto prog = seccomp::load(policy->seccomp);
  if (!prog.ok()) return fail("seccomp: " + prog.status().to_string());
  auto plan = build_plan(*policy, req.value("state_dir", options.state_dir), rootfs, *prog,
                         req.value("has_cgroup", false));
  if (!plan.ok()) return fail(plan.status().to_string());
  LaunchPlan& p = **plan;
  p.cgroup_attach_fds.assign(fds.begin() + 1, fds.end());
  p.interpret = &python_interpret;
  p.interpret_accepts = &python_accepts;
  p.interpreter_path = options.interpreter;

  int pidfd = -1;
  struct clone_args args = {};
  args.flags = kSandboxCloneFlags | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) init_main(p, fds[0]);
  int err = errno;
  cap_free(p.empty_caps);
  if (pid < 0) return fail(std::string("clone3: ") + strerror(err));
  send_json(kZygoteSpawned, {{"pid", pid}}, &pidfd, 1);
  close(pidfd);
}

int serve() {
  uint32_t type = 0;
  nlohmann::json body;
  std::vector<int> fds;
  if (!read_request(&type, &body, &fds) || type != kZygoteConfig || body.is_discarded()) return 2;
  for (int fd : fds) close(fd);
  const ZygoteOptions options = ZygoteOptions::from_json(body);

  nlohmann::json info;
  Status s = python_start(options, &info);
  if (!s.ok()) {
    send_json(kZygoteError, {{"error", s.to_string()}});
    return 3;
  }
  // A fork copies only the calling thread: any other (a BLAS pool, a stray timer) would be
  // missing in every child, holding whatever locks it held. Refuse rather than risk it.
  if (int n = thread_count(); n != 1) {
    send_json(kZygoteError, {{"error", "the template has " + std::to_string(n) +
                                           " threads after preloading; it must have exactly one to fork safely"}});
    return 3;
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) return 4;
  send_json(kZygoteReady, info);

  while (true) {
    struct pollfd p[2] = {{kCtl, POLLIN, 0}, {sigfd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 5;
    }
    if (p[1].revents) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) == sizeof si) {
      }
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    if (p[0].revents) {
      if (!read_request(&type, &body, &fds)) return 0;  // corral closed the socket: done
      if (type == kZygoteSpawn) spawn(options, body, fds);
      else send_json(kZygoteError, {{"error", "unknown request"}});
      for (int fd : fds) close(fd);
    }
  }
}

}  // namespace
}  // namespace corral::runtime

int main() { return corral::runtime::serve(); }
