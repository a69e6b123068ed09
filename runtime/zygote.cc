#include "runtime/zygote.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "runtime/fds.h"
#include "runtime/protocol.h"

namespace corral::runtime {
namespace {

// Waits for one frame from the template; its JSON payload and fds. An error when the
// template exits or does not answer in time.
Status await_frame(int ctl, int pidfd, uint64_t timeout_ms, FrameHeader* h, nlohmann::json* body,
                   std::vector<int>* fds) {
  struct pollfd p[2] = {{ctl, POLLIN, 0}, {pidfd, POLLIN, 0}};
  int r;
  do {
    r = poll(p, 2, static_cast<int>(timeout_ms));
  } while (r < 0 && errno == EINTR);
  if (r == 0) return Internal("zygote: the template did not answer within " + std::to_string(timeout_ms) + " ms");
  if (r < 0) return SysError("zygote: poll");
  int got[kMaxFds];
  int n = 0;
  if (recv_header(ctl, h, got, &n) != 0) return Internal("zygote: the template exited");
  fds->assign(got, got + n);
  if (h->length > kMaxFrame) return Internal("zygote: oversized frame from the template");
  std::string text(h->length, '\0');
  if (h->length && read_full(ctl, text.data(), h->length) != 0) return Internal("zygote: the template exited");
  *body = nlohmann::json::parse(text, nullptr, false);
  if (body->is_discarded()) return Internal("zygote: malformed frame from the template");
  return Status::Ok();
}

void close_all(const std::vector<int>& fds) {
  for (int fd : fds) close(fd);
}

Status send_json(int ctl, uint32_t type, const nlohmann::json& j, const int* fds = nullptr, int nfds = 0) {
  std::string text = j.dump();
  int r = send_frame(ctl, static_cast<Frame>(type), text.data(), static_cast<uint32_t>(text.size()), fds, nfds);
  return r == 0 ? Status::Ok() : SysError("zygote: send to the template", -r);
}

}  // namespace

nlohmann::json ZygoteOptions::to_json() const {
  return {{"language", language}, {"interpreter", interpreter}, {"preload", preload},
          {"warmup", warmup},     {"state_dir", state_dir},     {"cache_dir", cache_dir},
          {"spare", spare},       {"snapshot", snapshot},       {"prefault", prefault}};
}

ZygoteOptions ZygoteOptions::from_json(const nlohmann::json& j) {
  ZygoteOptions o;
  o.language = j.value("language", o.language);
  o.interpreter = j.value("interpreter", o.interpreter);
  o.preload = j.value("preload", o.preload);
  o.warmup = j.value("warmup", o.warmup);
  o.state_dir = j.value("state_dir", o.state_dir);
  o.cache_dir = j.value("cache_dir", o.cache_dir);
  o.spare = j.value("spare", o.spare);
  o.snapshot = j.value("snapshot", o.snapshot);
  o.prefault = j.value("prefault", o.prefault);
  return o;
}

std::string find_zygote_binary(const std::string& configured) {
  if (!configured.empty()) return configured;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    std::string next = dir + "/corral-zygote";
    if (access(next.c_str(), X_OK) == 0) return next;
  }
#ifdef CORRAL_BUILD_ROOT
  std::string built = std::string(CORRAL_BUILD_ROOT) + "/src/cli/corral-zygote";
  if (access(built.c_str(), X_OK) == 0) return built;
#endif
  return "/usr/local/libexec/corral/corral-zygote";
}

StatusOr<std::unique_ptr<Zygote>> Zygote::start(const ZygoteOptions& options) {
  if (geteuid() != 0) return Status(ErrorCode::kPermissionDenied, "zygote: must be started by root");
  const std::string binary = find_zygote_binary(options.binary);
  if (access(binary.c_str(), X_OK) != 0) return SysError("zygote: find corral-zygote", binary);
  // The template's HOME: matplotlib keeps its font cache there across restarts.
  for (const std::string& dir : {options.cache_dir.substr(0, options.cache_dir.rfind('/')), options.cache_dir}) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return SysError("zygote: create cache dir", dir);
  }
  if (chown(options.cache_dir.c_str(), kZygoteHostId, kZygoteHostId) != 0 || chmod(options.cache_dir.c_str(), 0700) != 0) {
    return SysError("zygote: own cache dir", options.cache_dir);
  }

  // Everything the child needs is built before the fork: corral may be multi-threaded, so
  // the child makes only raw syscalls between fork and execve.
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + options.cache_dir,
                                  "MPLCONFIGDIR=" + options.cache_dir + "/matplotlib", "MPLBACKEND=Agg",
                                  // One BLAS/OpenMP thread: the template must stay single-threaded to fork.
                                  "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
                                  "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = "corral-zygote";
  char* argv[] = {arg0.data(), nullptr};

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return SysError("zygote: socketpair");
  int pidfd = -1;
  struct clone_args args = {};
  args.flags = CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    // The control socket becomes fd 3 (dup2 clears close-on-exec), stdio /dev/null,
    // nothing else stays open; then the template's own ids, no groups, no capabilities.
    if (dup2(sv[1], 3) < 0) _exit(120);
    if (close_fds_from(4) != 0) _exit(121);
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0) _exit(122);
    for (int i = 0; i < 3; ++i) dup2(null_fd, i);
    if (null_fd > 3) close(null_fd);
    if (syscall(SYS_setgroups, 0, nullptr) != 0) _exit(123);
    if (syscall(SYS_setresgid, kZygoteHostId, kZygoteHostId, kZygoteHostId) != 0) _exit(124);
    if (syscall(SYS_setresuid, kZygoteHostId, kZygoteHostId, kZygoteHostId) != 0) _exit(125);
    // No PR_SET_PDEATHSIG: it fires when the *thread* that started the template exits, and
    // a server starts it from whichever thread asked first. The template exits when corral
    // closes its control socket instead, which the kernel does when corral dies.
    if (chdir("/") != 0) _exit(126);
    execve(binary.c_str(), argv, envp.data());
    _exit(127);
  }
  int clone_errno = errno;
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return SysError("zygote: clone3", clone_errno);
  }
  std::unique_ptr<Zygote> z(new Zygote());
  z->options_ = options;
  z->pid_ = static_cast<pid_t>(pid);
  z->pidfd_ = pidfd;
  z->ctl_ = sv[0];
  auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(send_json(z->ctl_, kZygoteConfig, options.to_json()));
  FrameHeader h;
  nlohmann::json body;
  std::vector<int> fds;
  Status s = await_frame(z->ctl_, z->pidfd_, options.start_timeout_ms, &h, &body, &fds);
  close_all(fds);
  if (!s.ok()) return Status(s.code(), s.message() + " while starting (is " + binary + " runnable?)");
  if (h.type != kZygoteReady) {
    return Status(ErrorCode::kUnsupported, "zygote: the template failed to start: " + body.value("error", body.dump()));
  }
  z->info_ = body;
  z->info_["pid"] = z->pid_;
  z->info_["start_ms"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  return z;
}

Zygote::~Zygote() {
  if (ctl_ >= 0) close(ctl_);
  if (pidfd_ >= 0) {
    syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
    siginfo_t si;
    while (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_), &si, WEXITED) != 0 && errno == EINTR) {
    }
    close(pidfd_);
  }
}

bool Zygote::alive() const {
  if (pidfd_ < 0) return false;
  struct pollfd p = {pidfd_, POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

StatusOr<ZygoteChild> Zygote::spawn(const Policy& policy, const rootfs::Rootfs& rootfs, bool has_cgroup,
                                    const std::vector<int>& attach_fds, int child_ctl) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!alive()) return Status(ErrorCode::kUnsupported, "zygote: the template is not running");
  if (attach_fds.size() + 1 > static_cast<size_t>(kMaxFds)) return Internal("zygote: too many cgroup files");
  nlohmann::json req = {{"policy", policy.to_json()},
                        {"rootfs",
                         {{"name", rootfs.name},
                          {"layers", rootfs.layers},
                          {"ro_binds", rootfs.ro_binds},
                          {"env", rootfs.env},
                          {"workdir", rootfs.workdir}}},
                        {"has_cgroup", has_cgroup},
                        {"state_dir", options_.state_dir}};
  std::vector<int> fds = {child_ctl};
  fds.insert(fds.end(), attach_fds.begin(), attach_fds.end());
  RETURN_IF_ERROR(send_json(ctl_, kZygoteSpawn, req, fds.data(), static_cast<int>(fds.size())));
  FrameHeader h;
  nlohmann::json body;
  std::vector<int> got;
  RETURN_IF_ERROR(await_frame(ctl_, pidfd_, 10'000, &h, &body, &got));
  if (h.type != kZygoteSpawned || got.size() != 1 || !body.contains("pid")) {
    close_all(got);
    return Status(ErrorCode::kInternal, "zygote: spawn failed: " + body.value("error", body.dump()));
  }
  return ZygoteChild{body["pid"].get<pid_t>(), got[0]};
}

}  // namespace corral::runtime
