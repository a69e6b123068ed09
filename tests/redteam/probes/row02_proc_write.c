/* REDTEAM row 2: write /proc/sysrq-trigger and /proc/sys/kernel/core_pattern.
 * Safe outcome: the open or the write fails (EROFS / EACCES / ENOENT where the kernel has no
 * such file), or the path is masked by /dev/null so the write reaches nothing. The values
 * written are harmless ("h" = sysrq help; core_pattern gets its current value back). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "probe.h"

static void try_write(const char *path, const char *data) {
  char what[128];
  snprintf(what, sizeof what, "write %s", path);
  int fd = open(path, O_WRONLY);
  if (fd < 0) {
    int e = errno;
    static const int ok[] = {EROFS, EACCES, ENOENT, EPERM, 0};
    expect_fail_list("row02", what, -1, e, ok);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
    SAFE("row02", what, "masked by /dev/null");
    close(fd);
    return;
  }
  ssize_t w = write(fd, data, strlen(data));
  int e = errno;
  close(fd);
  static const int ok[] = {EROFS, EACCES, EPERM, EINVAL, 0};
  expect_fail_list("row02", what, w, e, ok);
}

int main(void) {
  try_write("/proc/sysrq-trigger", "h");
  char cur[256] = "core\n";
  int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY);
  if (fd >= 0) {
    ssize_t n = read(fd, cur, sizeof cur - 1);
    cur[n > 0 ? n : 0] = '\0';
    close(fd);
  }
  try_write("/proc/sys/kernel/core_pattern", cur);
  try_write("/proc/sys/kernel/modprobe", "/sbin/modprobe\n");
  try_write("/proc/sys/vm/drop_caches", "1");
  try_write("/proc/sys/kernel/hostname", "corral-row02\n");
  return probe_exit();
}
