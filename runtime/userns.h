// User namespace, supervisor side. Every sandbox gets its own pair of unprivileged host ids:
//   sandbox uid 0    (corral-init)  -> host uid base + 2*slot
//   sandbox uid 1000 (user code)    -> host uid base + 2*slot + 1
// so no sandbox ever runs as host root and no two sandboxes share a host uid (a file one
// sandbox writes is foreign to every other). Slots are claimed with an flock on
// <state>/uids/<slot>; the kernel drops the lock if the supervisor dies, so a crashed
// supervisor never leaks a slot.
#pragma once

#include <sys/types.h>

#include <string>

#include "src/core/status.h"

namespace corral::runtime {

inline constexpr uid_t kHostIdBase = 1u << 30;  // far above login users and subuid ranges
inline constexpr uint32_t kIdSlots = 32768;

class IdSlot {
 public:
  IdSlot() = default;
  IdSlot(IdSlot&& o) noexcept : lock_fd_(o.lock_fd_), slot_(o.slot_) { o.lock_fd_ = -1; }
  IdSlot& operator=(IdSlot&& o) noexcept;
  ~IdSlot();

  static StatusOr<IdSlot> claim(const std::string& state_dir);
  uid_t root_host_id() const { return kHostIdBase + 2 * slot_; }
  uid_t user_host_id() const { return root_host_id() + 1; }
  uint32_t slot() const { return slot_; }

 private:
  int lock_fd_ = -1;
  uint32_t slot_ = 0;
};

// Writes setgroups=deny, then uid_map and gid_map of `pid` (maps are written once, by the
// supervisor; the sandbox can never rewrite them).
Status write_id_maps(pid_t pid, const IdSlot& ids);

}  // namespace corral::runtime
