// The native backend: sandboxes built directly from kernel primitives by this process
// (which must be root: it writes id maps and enters the sandbox's network namespace).
// See DESIGN.md "Native launch sequence"; create() below states the order in one place.
#pragma once

#include <string>

#include "src/core/executor.h"

namespace corral::runtime {

struct NativeOptions {
  std::string state_dir = "/run/corral";            // uid slot locks, the staging mount point
  std::string rootfs_dir = "/var/lib/corral/rootfs";  // host-mode skeleton and built rootfs
};

class NativeExecutor : public Executor {
 public:
  explicit NativeExecutor(NativeOptions options = {});

  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override;
  StatusOr<ExecResult> exec(Sandbox& sandbox, const ExecRequest& request) override;
  Status put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) override;
  StatusOr<std::vector<FileEntry>> get_files(Sandbox& sandbox, const std::vector<std::string>& paths,
                                             uint64_t max_bytes) override;
  Status destroy(Sandbox& sandbox) override;
  Features features() const override;

  // The policy checks this backend adds to Policy::from_json (what it cannot honour).
  static Status check_supported(const Policy& policy);

 private:
  NativeOptions options_;
};

}  // namespace corral::runtime
