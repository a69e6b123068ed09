// Building a LaunchPlan from a policy and a resolved rootfs (the supervisor does it before
// clone3; the zygote template does it before each fork of itself).
#include "runtime/launch_plan.h"

#include <linux/audit.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <initializer_list>

#include "runtime/rlimits.h"
#include "seccomp/simulate.h"

namespace corral::runtime {
namespace {

struct Call {
  int nr;
  uint64_t args[6];
};

// Whether `filter` allows every one of `calls` (x86_64, with those arguments).
bool filter_allows(const std::vector<struct sock_filter>& filter, std::initializer_list<Call> calls) {
  for (const Call& c : calls) {
    struct seccomp_data d = {};
    d.nr = c.nr;
    d.arch = AUDIT_ARCH_X86_64;
    for (int i = 0; i < 6; ++i) d.args[i] = c.args[i];
    auto ret = seccomp::simulate(filter, d);
    if (!ret.ok() || (*ret & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW) return false;
  }
  return true;
}

}  // namespace

// The image's WorkingDir applies unless the policy chose a workdir of its own.
std::string workdir_for(const Policy& policy, const rootfs::Rootfs& rootfs) {
  if (!rootfs.workdir.empty() && policy.workdir == Policy{}.workdir) return rootfs.workdir;
  return policy.workdir;
}

StatusOr<std::unique_ptr<LaunchPlan>> build_plan(const Policy& policy, const std::string& state_dir,
                                                 const rootfs::Rootfs& rootfs,
                                                 std::shared_ptr<const seccomp::Program> prog, bool has_cgroup) {
  auto plan = std::make_unique<LaunchPlan>();
  LaunchPlan& p = *plan;
  const Limits& l = policy.limits;
  p.staging = state_dir + "/mnt";
  p.staging_options = "size=" + std::to_string(l.disk_bytes) + ",mode=0755";
  p.new_root = p.staging + "/root";
  p.tmp_source = p.staging + "/tmp";
  p.shm_source = p.staging + "/shm";
  p.staging_dirs = {p.staging + "/upper", p.staging + "/work", p.new_root, p.tmp_source, p.shm_source};
  std::string lower;
  for (const std::string& layer : rootfs.layers) lower += (lower.empty() ? "" : ":") + layer;
  p.overlay_options = "lowerdir=" + lower + ",upperdir=" + p.staging + "/upper,workdir=" + p.staging + "/work";
  for (const std::string& dir : rootfs.ro_binds) {
    p.rootfs_mounts.push_back({MountStep::Kind::kBindReadonly, dir, p.new_root + dir, "", false});
  }
  p.proc_target = p.new_root + "/proc";
  for (const char* f : {"kcore", "keys", "timer_list", "sched_debug", "latency_stats", "kallsyms", "kmsg",
                        "kpagecount", "kpageflags", "kpagecgroup", "config.gz"}) {
    p.proc_masks.push_back({MountStep::Kind::kMaskFile, "", p.proc_target + "/" + f, "", true});
  }
  for (const char* d : {"acpi", "scsi", "asound", "driver"}) {
    p.proc_masks.push_back({MountStep::Kind::kMaskDir, "", p.proc_target + "/" + d, "", false});
  }
  // Read-only rather than masked: a write fails with EROFS instead of vanishing into /dev/null.
  for (const char* d : {"sys", "bus", "fs", "irq", "sysrq-trigger"}) {
    p.proc_masks.push_back({MountStep::Kind::kReadonlyInPlace, "", p.proc_target + "/" + d, "", false});
  }
  p.dev_target = p.new_root + "/dev";
  p.dev_options = "size=64k,mode=0755";
  p.dev_nodes = {"null", "zero", "full", "random", "urandom", "tty"};
  p.workdir_in_root = p.new_root + workdir_for(policy, rootfs);
  for (size_t i = 0; i < policy.mounts.size(); ++i) {
    const MountSpec& m = policy.mounts[i];
    if (m.type == MountSpec::Type::kTmpfs) {
      p.user_mounts.push_back({MountStep::Kind::kTmpfs, "", p.new_root + m.target,
                               "size=" + std::to_string(m.size_bytes) + ",mode=0755,uid=" +
                                   std::to_string(kSandboxUid) + ",gid=" + std::to_string(kSandboxGid),
                               false});
      continue;
    }
    struct stat st;
    if (stat(m.source.c_str(), &st) != 0) {
      return Status(ErrorCode::kInvalidArgument, "bind source does not exist: " + m.source,
                    "mounts[" + std::to_string(i) + "].source", errno);
    }
    p.user_mounts.push_back({m.readonly ? MountStep::Kind::kBindReadonly : MountStep::Kind::kBindWritable, m.source,
                             p.new_root + m.target, "", !S_ISDIR(st.st_mode)});
  }
  p.hostname = policy.hostname;
  p.seccomp = std::move(prog);
  p.seccomp_prog.len = static_cast<unsigned short>(p.seccomp->filter.size());
  p.seccomp_prog.filter = const_cast<sock_filter*>(p.seccomp->filter.data());
  p.empty_caps = cap_init();
  if (!p.empty_caps) return SysError("cap_init");
  p.last_cap = static_cast<int>(cap_max_bits()) - 1;
  p.rlimits = rlimits_for(l, has_cgroup);
  const auto& f = p.seccomp->filter;
  p.holder_allowed = filter_allows(f, {{SYS_clone, {CLONE_VM | SIGCHLD}}, {SYS_pause, {}}});
  // What a prepared worker calls between its request and execve (protocol.cc's framing,
  // worker.cc's decoding), with the arguments it passes where a profile may look at them.
  p.prepared_worker_allowed = filter_allows(
      f, {{SYS_recvmsg, {3, 0, MSG_CMSG_CLOEXEC}},
          {SYS_read, {3}},
          {SYS_mmap, {0, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, static_cast<uint64_t>(-1), 0}},
          {SYS_dup3, {4, 0, 0}},
          {SYS_close, {4}},
          {SYS_chdir, {}},
          {SYS_execve, {}},
          {SYS_sendmsg, {3, 0, MSG_NOSIGNAL}},
          {SYS_write, {3}},
          {SYS_exit_group, {}},
          {SYS_poll, {}}});  // whether the request is already there (worker.cc)
  return plan;
}

}  // namespace corral::runtime
