#include "runtime/native_executor.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "rootfs/store.h"
#include "runtime/dev_template.h"
#include "runtime/env.h"
#include "runtime/files.h"
#include "runtime/init.h"
#include "runtime/launch_plan.h"
#include "runtime/netns.h"
#include "runtime/protocol.h"
#include "runtime/rlimits.h"
#include "runtime/supervisor.h"
#include "runtime/userns.h"
#include "src/core/unique_fd.h"

namespace corral::runtime {
namespace {

constexpr int kSetupTimeoutMs = 10'000;

class NativeSandbox : public Sandbox {
 public:
  NativeSandbox(std::string id, Policy policy, IdSlot ids)
      : id_(std::move(id)), policy_(std::move(policy)), ids_(std::move(ids)) {}
  ~NativeSandbox() override {
    kill_and_reap();
    remove_cgroup();
    release_netns();
  }

  const std::string& id() const override { return id_; }
  const Policy& policy() const override { return policy_; }

  // Killing PID 1 ends the pid namespace: the kernel kills every other process in it and
  // init's exit completes only once they are gone. Mounts, the network namespace and the
  // staging tmpfs go with the last process.
  void kill_and_reap() {
    if (pidfd >= 0) {
      syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      siginfo_t si;
      int r = -1;
      if (!zygote) {
        while ((r = waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &si, WEXITED)) != 0 &&
               errno == EINTR) {
        }
      }
      if (r != 0) {
        // Not our child to reap: a zygote template's (it reaps it), or this process is a
        // fork that finishes the teardown for a supervisor that has exited. The pidfd turns
        // readable once init has exited, which is after every other process of its
        // namespace is gone.
        struct pollfd p = {pidfd, POLLIN, 0};
        while (poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
      }
      close(pidfd);
      pidfd = -1;
    }
    if (ctl >= 0) close(ctl);
    ctl = -1;
  }

  // After kill_and_reap: every process is gone, so the cgroup can go too.
  Status remove_cgroup() {
    if (!cgroup) return Status::Ok();
    Status s = cgroup->remove();
    if (!s.ok() && s.sys_errno() == EBUSY) {
      // Processes that escaped init's namespace cannot exist, but be certain.
      cgroup->kill_all();
      s = cgroup->remove();
    }
    cgroup.reset();
    return s;
  }

  // Unpins its stashed network namespace (the namespace ends with the sandbox's processes).
  void release_netns() {
    if (!netns_claim.empty()) NetnsStash::release(netns_claim);
    netns_claim.clear();
  }

  const IdSlot& ids() const { return ids_; }
  pid_t pid = -1;
  int pidfd = -1;
  int ctl = -1;
  bool zygote = false;  // forked by a zygote template (its child, not this process's)
  bool ready_pending = false;  // init's "ready" (or its setup error) not read yet
  std::unique_ptr<SandboxCgroup> cgroup;  // null when running with rlimits only
  std::string netns_claim;  // its network namespace's pin in the stash, released at the end

 private:
  std::string id_;
  Policy policy_;
  IdSlot ids_;
};

std::string new_sandbox_id(uint32_t slot) {
  static std::atomic<uint64_t> counter{0};
  char buf[64];
  snprintf(buf, sizeof buf, "n%u-%u-%llu", static_cast<unsigned>(getpid()), slot,
           static_cast<unsigned long long>(counter.fetch_add(1)));
  return buf;
}

Status mkdir_p(const std::string& path, mode_t mode) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string p = path.substr(0, i);
      if (mkdir(p.c_str(), mode) != 0 && errno != EEXIST) return SysError("create directory", p);
    }
  }
  return Status::Ok();
}

// Waits for init's answer to "go": ready, or the step that failed.
Status await_ready(const NativeSandbox& sb) {
  struct pollfd p[2] = {{sb.ctl, POLLIN, 0}, {sb.pidfd, POLLIN, 0}};
  int r;
  do {
    r = poll(p, 2, kSetupTimeoutMs);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return Internal("corral-init did not finish setting up the sandbox within 10 s");
  FrameHeader h;
  int fds[kMaxFds];
  int nfds = 0;
  if (recv_header(sb.ctl, &h, fds, &nfds) != 0) return Internal("corral-init exited during sandbox setup");
  for (int i = 0; i < nfds; ++i) close(fds[i]);
  if (h.type == static_cast<uint32_t>(Frame::kReady)) return Status::Ok();
  ErrorPayload e{};
  if (h.type != static_cast<uint32_t>(Frame::kSetupError) || h.length != sizeof e || read_full(sb.ctl, &e, sizeof e)) {
    return Internal("corral-init broke the setup protocol");
  }
  return Status(e.err == EPERM || e.err == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kUnsupported,
                std::string("sandbox setup failed at '") + e.step + "'", e.detail, e.err);
}

// clone3 with every namespace at once. The child becomes corral-init and never returns.
// Supplementary groups: a new user namespace keeps the creator's groups, and with
// setgroups denied nothing inside could drop them, so this thread drops its own (the raw
// syscall is per-thread, unlike glibc's setgroups) for the duration of the clone.
// With `netns_fd` (a PreparedNetns), init is born in that network namespace instead of a new
// one: this thread enters it for the clone and returns to its own.
StatusOr<pid_t> clone_init(const LaunchPlan& plan, int child_ctl, int* pidfd, int cgroup_fd, int netns_fd) {
  struct clone_args args = {};
  args.flags = kSandboxCloneFlags | CLONE_PIDFD;
  UniqueFd own_netns;
  if (netns_fd >= 0) {
    own_netns.reset(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!own_netns.ok()) return SysError("open own netns", "/proc/thread-self/ns/net");
    if (setns(netns_fd, CLONE_NEWNET) != 0) return SysError("enter the sandbox's network namespace");
    args.flags &= ~static_cast<uint64_t>(CLONE_NEWNET);
  }
  struct ReturnNetns {
    const UniqueFd& own;
    ~ReturnNetns() {
      // Staying in the sandbox's namespace would silently cut this thread off the network.
      if (own.ok() && setns(own.get(), CLONE_NEWNET) != 0) abort();
    }
  } return_netns{own_netns};
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;  // born in its cgroup: no window outside the limits
    args.cgroup = static_cast<uint64_t>(cgroup_fd);
  }
  args.pidfd = reinterpret_cast<uint64_t>(pidfd);
  args.exit_signal = SIGCHLD;
  gid_t groups[256];
  int ngroups = getgroups(256, groups);
  if (ngroups < 0) return SysError("getgroups");
  if (ngroups > 0 && syscall(SYS_setgroups, 0, nullptr) != 0) return SysError("drop supplementary groups");
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) init_main(plan, child_ctl);
  int clone_errno = errno;
  if (ngroups > 0) syscall(SYS_setgroups, ngroups, groups);
  if (pid < 0) {
    if (clone_errno == EPERM || clone_errno == ENOSPC || clone_errno == EUSERS) {
      return Status(ErrorCode::kPermissionDenied, "clone3 with new namespaces was refused (see `corral doctor`)", "",
                    clone_errno);
    }
    return SysError("clone3", clone_errno);
  }
  return static_cast<pid_t>(pid);
}

NativeSandbox& native(Sandbox& s) { return static_cast<NativeSandbox&>(s); }

// The zygote's side of create(): the template forks the new corral-init; it joins its
// cgroups through files opened here (it cannot open them itself).
Status spawn_from_zygote(Zygote& zygote, NativeSandbox& sb, const rootfs::Rootfs& rootfs) {
  std::vector<UniqueFd> attach;
  std::vector<int> attach_fds;
  if (sb.cgroup) {
    for (const std::string& f : sb.cgroup->attach_files()) {
      attach.emplace_back(open(f.c_str(), O_WRONLY | O_CLOEXEC));
      if (!attach.back().ok()) return SysError("open cgroup attach file", f);
      attach_fds.push_back(attach.back().get());
    }
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return SysError("socketpair");
  UniqueFd mine(sv[0]), theirs(sv[1]);
  auto child = zygote.spawn(sb.policy(), rootfs, sb.cgroup != nullptr, attach_fds, theirs.get());
  if (!child.ok()) return child.status();
  sb.ctl = mine.release();
  sb.pid = child->pid;
  sb.pidfd = child->pidfd;
  sb.zygote = true;
  return Status::Ok();
}

}  // namespace

NativeExecutor::NativeExecutor(NativeOptions options) : options_(std::move(options)) {}

NativeExecutor::~NativeExecutor() {
  if (cgroup_driver_) cgroup_driver_->remove_subtree_if_empty();
  // Namespaces for the next short-lived process, made now that this one's answer is out
  // (the CLI runs this in its teardown child). A failure only means the next one waits.
  const unsigned used = netns_flavors_used_.load();
  for (bool loopback : {false, true}) {
    if (used & (1u << loopback)) (void)NetnsStash(options_.state_dir + "/netns").fill(loopback, 1);
  }
}

Status NativeExecutor::check_supported(const Policy& policy) {
  if (policy.network.mode == NetworkMode::kAllowlist) {
    return Unsupported("the native backend cannot enforce an allowlist network yet", "network.mode");
  }
  return Status::Ok();
}

StatusOr<CgroupDriver*> NativeExecutor::cgroups() {
  std::call_once(cgroup_once_, [this] {
    auto d = CgroupDriver::detect();
    if (!d.ok()) {
      cgroup_status_ = d.status();
      return;
    }
    cgroup_driver_ = std::move(d).value();
    auto removed = cgroup_driver_->remove_stale(options_.state_dir);
    stale_removed_ = removed.ok() ? *removed : 0;
  });
  if (!cgroup_driver_) return cgroup_status_;
  return cgroup_driver_.get();
}

const std::string& NativeExecutor::dev_template() {
  std::call_once(dev_once_, [this] {
    // Beside the rootfs store (/var/lib/corral): a disk filesystem, where device nodes work
    // (not /run, usually nodev). Without one, each sandbox builds its /dev.
    auto made = ensure_dev_template((std::filesystem::path(options_.rootfs_dir).parent_path() / "dev-v1").string());
    if (made.ok()) dev_template_ = *made;
  });
  return dev_template_;
}

StatusOr<int> NativeExecutor::remove_stale() {
  auto driver = cgroups();
  if (!driver.ok()) return driver.status();
  auto again = (*driver)->remove_stale(options_.state_dir);
  if (!again.ok()) return again.status();
  return stale_removed_ + *again;
}

StatusOr<std::unique_ptr<Sandbox>> NativeExecutor::create(const SandboxSpec& spec) {
  const Policy& policy = spec.policy;
  RETURN_IF_ERROR(check_supported(policy));
  if (geteuid() != 0) {
    return Status(ErrorCode::kPermissionDenied, "the native backend must run as root (it writes id maps)");
  }
  // A sandbox cloned here (not forked by a zygote) gets a network namespace made on a
  // helper thread while this one does the rest below.
  // A short-lived process takes one made ahead of time when there is one.
  const bool loopback = policy.network.mode == NetworkMode::kLoopback;
  std::optional<PreparedNetns> netns;
  std::optional<NetnsStash::Taken> stashed;
  struct ReleaseClaim {
    std::optional<NetnsStash::Taken>& t;
    ~ReleaseClaim() {
      if (t && !t->claimed.empty()) NetnsStash::release(t->claimed);
    }
  } release_unused_claim{stashed};
  if (spec.zygote.empty() || !zygote_for(spec.zygote)) {
    if (options_.prepared_netns) {
      netns_flavors_used_ |= 1u << loopback;
      stashed = NetnsStash(options_.state_dir + "/netns").take(loopback);
    }
    if (!stashed) netns.emplace(loopback);
  }
  RETURN_IF_ERROR(mkdir_p(options_.state_dir + "/mnt", 0755));
  auto rootfs = rootfs::resolve_rootfs(policy.rootfs, options_.rootfs_dir);
  if (!rootfs.ok()) return rootfs.status();
  auto prog = seccomp::load(policy.seccomp);
  if (!prog.ok()) return prog.status();
  auto driver = cgroups();
  if (!driver.ok() && !policy.allow_rlimit_fallback) {
    return Status(ErrorCode::kUnsupported,
                  driver.status().message() +
                      "; refusing to run without memory and pids limits for the whole sandbox (set "
                      "allow_rlimit_fallback in the policy to accept per-process rlimits instead)",
                  "limits");
  }
  if (!driver.ok() && policy.limits.cpu != 0) return Unsupported("needs the cgroup cpu controller", "limits.cpu");
  auto ids = IdSlot::claim(options_.state_dir);
  if (!ids.ok()) return ids.status();
  const std::string id = new_sandbox_id(ids->slot());
  // The sandbox's effective policy: the image's Env under the policy's, its WorkingDir
  // unless the policy set one.
  Policy effective = policy;
  effective.workdir = workdir_for(policy, *rootfs);
  for (const std::string& kv : rootfs->env) {
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq > 0 && !policy.env.count(kv.substr(0, eq))) {
      effective.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  auto sb = std::make_unique<NativeSandbox>(id, effective, std::move(ids).value());
  std::shared_ptr<Zygote> zygote;
  if (!spec.zygote.empty()) {
    zygote = zygote_for(spec.zygote);
    // The template's interpreter and its imports come from the host: only a host-mode
    // rootfs shows the sandbox the same files.
    if (zygote && (rootfs->name != "host" || !zygote->alive())) zygote.reset();
  }
  // Where the cgroup can only be joined by writing to it (v1) and init is cloned here (not
  // forked by a zygote, which is handed the attach files up front), the cgroup is made
  // after clone3, while init builds its root filesystem, and init joins it before it
  // reports ready. Otherwise it exists first: v2's CLONE_INTO_CGROUP needs it at clone time.
  const bool cgroup_after_clone = driver.ok() && !zygote && !(*driver)->clone_into();
  if (driver.ok() && !cgroup_after_clone) {
    auto cg = (*driver)->create(id, policy.limits);
    if (!cg.ok()) return cg.status();
    sb->cgroup = std::move(cg).value();
  }
  if (zygote) {
    Status forked = spawn_from_zygote(*zygote, *sb, *rootfs);
    if (forked.ok()) {
      ++zygote_hits_;
    } else {
      zygote.reset();  // the same sandbox, made cold
    }
  }
  if (!spec.zygote.empty() && !zygote) ++zygote_fallbacks_;
  bool net_prepared = false;  // init was cloned into a namespace made (and lo set) beforehand
  if (!zygote) {
    auto plan = build_plan(policy, options_.state_dir, *rootfs, *prog, driver.ok());
    if (!plan.ok()) return plan.status();
    std::unique_ptr<LaunchPlan> launch = std::move(plan).value();
    launch->dev_template = dev_template();
    struct CapsFree {
      cap_t c;
      ~CapsFree() { cap_free(c); }
    } caps_guard{launch->empty_caps};

    UniqueFd net;
    if (netns) {
      auto made = netns->take();
      if (!made.ok()) return made.status();
      net = std::move(made).value();
    } else if (stashed) {
      net = std::move(stashed->fd);
      sb->netns_claim = std::move(stashed->claimed);  // released with the sandbox
      stashed->claimed.clear();
    }
    net_prepared = net.ok();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return SysError("socketpair");
    sb->ctl = sv[0];
    auto pid = clone_init(*launch, sv[1], &sb->pidfd, sb->cgroup ? sb->cgroup->clone_into_fd() : -1, net.get());
    close(sv[1]);
    if (!pid.ok()) return pid.status();
    sb->pid = *pid;
  }

  // Parent side of each namespace, then "go"; on any failure the sandbox's destructor kills
  // init, which takes everything it made with it.
  RETURN_IF_ERROR(write_id_maps(sb->pid, sb->ids()));
  // A send fails when init has already given up: its reason, queued before it exited, is
  // the error to report, not the broken pipe.
  auto send_failed = [&](const char* what, int r) {
    Status reason = await_ready(*sb);
    return reason.ok() ? SysError(what, -r) : reason;
  };
  if (int r = send_frame(sb->ctl, Frame::kGo, nullptr, 0); r != 0) return send_failed("send go to corral-init", r);
  // While init builds its root filesystem: the cgroup (when made late), then the loopback.
  // Nothing in the sandbox touches the network before the first exec, which cannot start
  // until init reports ready.
  std::vector<UniqueFd> join;
  std::vector<int> join_fds;
  if (cgroup_after_clone) {
    // If creating it fails here, the sandbox's destructor kills init.
    auto cg = (*driver)->create(id, policy.limits);
    if (!cg.ok()) return cg.status();
    sb->cgroup = std::move(cg).value();
  }
  if (!zygote && sb->cgroup && !(*driver)->clone_into()) {
    // Also when a zygote could not fork this sandbox and it was cloned here after all.
    // Opened here, written by init: the kernel checks the opener's credentials, and a task
    // moving itself skips the slow path a move by another process takes.
    for (const std::string& f : sb->cgroup->self_attach_files()) {
      join.emplace_back(open(f.c_str(), O_WRONLY | O_CLOEXEC));
      if (!join.back().ok()) return SysError("open cgroup attach file", f);
      join_fds.push_back(join.back().get());
    }
  }
  // (A prepared namespace has its lo up already.)
  if (loopback && (zygote || !net_prepared)) {
    RETURN_IF_ERROR(bring_up_loopback(sb->pid));
  }
  if (int r = send_frame(sb->ctl, Frame::kPlaced, nullptr, 0, join_fds.data(), static_cast<int>(join_fds.size()));
      r != 0) {
    return send_failed("send cgroup to corral-init", r);
  }
  join.clear();
  // A short-lived process has one use for the sandbox, right away: the first request is
  // sent before init reports ready (see SandboxChannel::await_ready), so the wait for that
  // report moves there.
  if (options_.short_lived && !zygote) {
    sb->ready_pending = true;
  } else {
    RETURN_IF_ERROR(await_ready(*sb));
  }
  // Joined just now, after its setup: nothing the sandbox ran is counted in it yet.
  if (cgroup_after_clone) sb->cgroup->mark_unused();
  return std::unique_ptr<Sandbox>(std::move(sb));
}

StatusOr<ExecResult> NativeExecutor::exec(Sandbox& sandbox, const ExecRequest& request) {
  return exec_in(sandbox, request, false);
}

// corral-init keeps the detached program out of the "an exec's processes end with it" sweep.
StatusOr<ExecResult> NativeExecutor::exec_detached(Sandbox& sandbox, const ExecRequest& request) {
  return exec_in(sandbox, request, true);
}

StatusOr<ExecResult> NativeExecutor::exec_in(Sandbox& sandbox, const ExecRequest& request, bool detach) {
  NativeSandbox& sb = native(sandbox);
  if (sb.pidfd < 0) return Status(ErrorCode::kNotFound, "sandbox was destroyed", sb.id());
  auto env = build_environment(sb.policy(), request);
  if (!env.ok()) return env.status();
  SandboxChannel ch{sb.ctl, sb.pidfd, nullptr};
  Status setup;
  if (sb.ready_pending) {
    ch.await_ready = [&] {
      sb.ready_pending = false;
      return setup = await_ready(sb);
    };
  }
  auto outcome = supervise_exec(ch, sb.policy(), request, *env, sb.cgroup.get(), detach);
  if (!setup.ok()) sb.kill_and_reap();
  if (!outcome.ok()) return outcome.status();
  if (outcome->sandbox_broken) sb.kill_and_reap();
  return std::move(outcome->result);
}

namespace {

// A sandbox whose readiness create() did not wait for: waits for it now.
Status ensure_ready(NativeSandbox& sb) {
  if (!sb.ready_pending) return Status::Ok();
  sb.ready_pending = false;
  Status s = await_ready(sb);
  if (!s.ok()) sb.kill_and_reap();
  return s;
}

}  // namespace

Status NativeExecutor::put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) {
  NativeSandbox& sb = native(sandbox);
  if (sb.pidfd < 0) return Status(ErrorCode::kNotFound, "sandbox was destroyed", sb.id());
  RETURN_IF_ERROR(ensure_ready(sb));
  std::string root = "/proc/" + std::to_string(sb.pid) + "/root";
  int fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("open sandbox root", root);
  Status s = write_files_beneath(fd, sb.policy().workdir, files, sb.ids().user_host_id(), sb.ids().user_host_id());
  close(fd);
  return s;
}

StatusOr<std::vector<FileEntry>> NativeExecutor::get_files(Sandbox& sandbox, const std::vector<std::string>& paths,
                                                           uint64_t max_bytes) {
  NativeSandbox& sb = native(sandbox);
  if (sb.pidfd < 0) return Status(ErrorCode::kNotFound, "sandbox was destroyed", sb.id());
  RETURN_IF_ERROR(ensure_ready(sb));
  std::string root = "/proc/" + std::to_string(sb.pid) + "/root";
  int fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("open sandbox root", root);
  auto files =
      read_files_beneath(fd, sb.policy().workdir, paths, max_bytes, sb.ids().user_host_id(), sb.ids().user_host_id());
  close(fd);
  return files;
}

Status NativeExecutor::destroy(Sandbox& sandbox) {
  NativeSandbox& sb = native(sandbox);
  sb.kill_and_reap();
  sb.release_netns();
  return sb.remove_cgroup();
}

Status NativeExecutor::start_zygote(const ZygoteOptions& options) {
  // cgroup v2: detecting the driver moves this process into its supervisor leaf (no
  // internal processes). The template must be born there too, not left behind in the
  // cgroup corral started in, where it would block that move for every later detection.
  (void)cgroups();
  ZygoteOptions o = options;
  o.state_dir = options_.state_dir;
  auto z = Zygote::start(o);
  if (!z.ok()) return z.status();
  std::lock_guard<std::mutex> lock(zygote_mu_);
  zygotes_[o.language] = std::shared_ptr<Zygote>(std::move(z).value());
  return Status::Ok();
}

void NativeExecutor::stop_zygotes() {
  std::lock_guard<std::mutex> lock(zygote_mu_);
  zygotes_.clear();
}

std::shared_ptr<Zygote> NativeExecutor::zygote_for(const std::string& language) {
  std::lock_guard<std::mutex> lock(zygote_mu_);
  auto it = zygotes_.find(language);
  return it == zygotes_.end() ? nullptr : it->second;
}

nlohmann::json NativeExecutor::zygote_info() const {
  std::lock_guard<std::mutex> lock(zygote_mu_);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [lang, z] : zygotes_) {
    out[lang] = z->info();
    out[lang]["alive"] = z->alive();
  }
  return out;
}

bool NativeExecutor::from_zygote(const Sandbox& sandbox) {
  return static_cast<const NativeSandbox&>(sandbox).zygote;
}

Features NativeExecutor::features() const {
  Features f;
  f.backend = "native";
  f.user_namespace = true;
  f.seccomp = true;
  f.overlay = true;
  f.cgroups = true;
  return f;
}

}  // namespace corral::runtime
