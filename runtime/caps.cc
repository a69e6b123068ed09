#include "runtime/caps.h"

#include <linux/securebits.h>
#include <sys/prctl.h>

#include <cerrno>

namespace corral::runtime {

int drop_capability_bounds(const LaunchPlan& plan, ErrorPayload* err) {
  for (int cap = 0; cap <= plan.last_cap; ++cap) {
    if (cap_drop_bound(static_cast<cap_value_t>(cap)) != 0 && errno != EINVAL) {
      make_error(err, "drop bounding capability", errno, "");
      return -1;
    }
  }
  if (cap_reset_ambient() != 0) {
    make_error(err, "clear ambient capabilities", errno, "");
    return -1;
  }
  // NOROOT: uid 0 gains nothing on exec. NO_SETUID_FIXUP off + KEEP_CAPS off: the switch to
  // the sandbox uid drops permitted/effective. All locked against change.
  unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
                  SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (cap_set_secbits(bits) != 0) {
    make_error(err, "lock securebits", errno, "");
    return -1;
  }
  return 0;
}

int clear_capabilities(const LaunchPlan& plan, ErrorPayload* err) {
  if (cap_set_proc(plan.empty_caps) != 0) {
    make_error(err, "clear capabilities", errno, "");
    return -1;
  }
  return 0;
}

}  // namespace corral::runtime
