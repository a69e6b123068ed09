// The native backend: sandboxes built directly from kernel primitives by this process
// (which must be root: it writes id maps and enters the sandbox's network namespace).
// See DESIGN.md "Native launch sequence"; create() below states the order in one place.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cgroup.h"
#include "runtime/zygote.h"
#include "src/core/executor.h"

namespace corral::runtime {

struct NativeOptions {
  std::string state_dir = "/run/corral";            // uid slot locks, the staging mount point
  std::string rootfs_dir = "/var/lib/corral/rootfs";  // host-mode skeleton and built rootfs
  // For a process that makes a sandbox or two and exits (the CLI): the first request to a
  // cold sandbox is sent before corral-init reports ready (SandboxChannel::await_ready).
  bool short_lived = false;
  // Cold sandboxes take their network namespace from a stash in <state_dir>/netns that this
  // executor's destructor refills (see NetnsStash in netns.h), instead of making one while
  // they wait. Off by default: the stash keeps namespaces pinned by mounts on the host
  // between processes (the CLI turns it on with CORRAL_PREPARED_NETNS=1).
  bool prepared_netns = false;
};

class NativeExecutor : public Executor {
 public:
  explicit NativeExecutor(NativeOptions options = {});
  ~NativeExecutor() override;

  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override;
  StatusOr<ExecResult> exec(Sandbox& sandbox, const ExecRequest& request) override;
  StatusOr<ExecResult> exec_detached(Sandbox& sandbox, const ExecRequest& request) override;
  Status put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) override;
  StatusOr<std::vector<FileEntry>> get_files(Sandbox& sandbox, const std::vector<std::string>& paths,
                                             uint64_t max_bytes) override;
  Status destroy(Sandbox& sandbox) override;
  Features features() const override;

  // The policy checks this backend adds to Policy::from_json (what it cannot honour).
  static Status check_supported(const Policy& policy);

  // The host's cgroup driver, detected on first use (stale corral cgroups left by dead
  // supervisors are removed then). An error when the host has no usable controllers.
  StatusOr<CgroupDriver*> cgroups();
  // Removes what dead supervisors left behind; returns how many cgroups were removed.
  StatusOr<int> remove_stale();

  // Starts (or restarts) the zygote for options.language; sandboxes whose SandboxSpec names
  // that language are then forked from it. Takes as long as the preload imports.
  Status start_zygote(const ZygoteOptions& options);
  void stop_zygotes();
  // {"python": {"pid", "python", "preloaded", ..., "alive"}} for each zygote started.
  nlohmann::json zygote_info() const;
  // True if this sandbox was forked from a zygote (false: made cold).
  static bool from_zygote(const Sandbox& sandbox);
  // Sandboxes created from a zygote, and cold although one was asked for (template down,
  // rootfs not host mode).
  uint64_t zygote_hits() const { return zygote_hits_; }
  uint64_t zygote_fallbacks() const { return zygote_fallbacks_; }

 private:
  std::shared_ptr<Zygote> zygote_for(const std::string& language);
  mutable std::mutex zygote_mu_;
  std::map<std::string, std::shared_ptr<Zygote>> zygotes_;
  std::atomic<uint64_t> zygote_hits_{0}, zygote_fallbacks_{0};

  StatusOr<ExecResult> exec_in(Sandbox& sandbox, const ExecRequest& request, bool detach);

  NativeOptions options_;
  std::once_flag cgroup_once_;
  std::unique_ptr<CgroupDriver> cgroup_driver_;
  Status cgroup_status_;
  int stale_removed_ = 0;  // by the cleanup that runs when the driver is first detected
  // The prepared /dev (dev_template.h), made on first use; "" where it cannot be used.
  const std::string& dev_template();
  std::once_flag dev_once_;
  std::string dev_template_;
  // prepared_netns: the network namespace flavors taken from the stash (bit 0: lo down, 1: up).
  std::atomic<unsigned> netns_flavors_used_{0};
};

}  // namespace corral::runtime
