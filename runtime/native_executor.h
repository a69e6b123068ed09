// The native backend: sandboxes built directly from kernel primitives by this process
// (which must be root: it writes id maps and enters the sandbox's network namespace).
// See DESIGN.md "Native launch sequence"; create() below states the order in one place.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "runtime/cgroup.h"
#include "src/core/executor.h"

namespace corral::runtime {

struct NativeOptions {
  std::string state_dir = "/run/corral";            // uid slot locks, the staging mount point
  std::string rootfs_dir = "/var/lib/corral/rootfs";  // host-mode skeleton and built rootfs
};

class NativeExecutor : public Executor {
 public:
  explicit NativeExecutor(NativeOptions options = {});
  ~NativeExecutor() override;

  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override;
  StatusOr<ExecResult> exec(Sandbox& sandbox, const ExecRequest& request) override;
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

 private:
  NativeOptions options_;
  std::once_flag cgroup_once_;
  std::unique_ptr<CgroupDriver> cgroup_driver_;
  Status cgroup_status_;
  int stale_removed_ = 0;  // by the cleanup that runs when the driver is first detected
};

}  // namespace corral::runtime
