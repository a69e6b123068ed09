#include "runtime/fds.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace corral::runtime {

int close_fds_from(int lowfd) {
  if (syscall(SYS_close_range, static_cast<unsigned>(lowfd), ~0u, 0u) == 0) return 0;
  if (errno != ENOSYS) return -1;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  for (rlim_t fd = static_cast<rlim_t>(lowfd); fd < rl.rlim_cur; ++fd) close(static_cast<int>(fd));
  return 0;
}

}  // namespace corral::runtime
