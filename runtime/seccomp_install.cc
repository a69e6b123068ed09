#include "runtime/seccomp_install.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace corral::runtime {

int install_seccomp(const LaunchPlan& plan, ErrorPayload* err) {
  unsigned flags = plan.seccomp->uses_notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &plan.seccomp_prog);
  if (r < 0) {
    make_error(err, "install seccomp filter", errno, plan.seccomp->name.c_str());
    return -1;
  }
  return plan.seccomp->uses_notify ? static_cast<int>(r) : -2;
}

}  // namespace corral::runtime
