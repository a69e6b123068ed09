#include "runtime/rlimits.h"

#include <sys/resource.h>

#include <cerrno>

namespace corral::runtime {

std::vector<LaunchPlan::Rlimit> rlimits_for(const Limits& limits, bool cgroup_enforced) {
  std::vector<LaunchPlan::Rlimit> r = {
      {RLIMIT_CORE, 0},
      {RLIMIT_FSIZE, static_cast<rlim_t>(limits.file_size_bytes)},
      {RLIMIT_NOFILE, static_cast<rlim_t>(limits.open_files)},
      // The sandbox user's host uid is unique to this sandbox, so the kernel's per-uid
      // process count is exactly this sandbox's task count.
      {RLIMIT_NPROC, static_cast<rlim_t>(limits.pids)},
  };
  if (cgroup_enforced) return r;
  r.push_back({RLIMIT_DATA, static_cast<rlim_t>(limits.memory_bytes)});
  if (limits.cpu_ms) {
    r.push_back({RLIMIT_CPU, static_cast<rlim_t>((limits.cpu_ms + 999) / 1000)});
  }
  return r;
}

int apply_rlimits(const LaunchPlan& plan, ErrorPayload* err) {
  for (const auto& r : plan.rlimits) {
    struct rlimit rl = {r.value, r.value};
    if (setrlimit(static_cast<__rlimit_resource>(r.resource), &rl) != 0) {
      make_error(err, "setrlimit", errno, "");
      return -1;
    }
  }
  return 0;
}

}  // namespace corral::runtime
