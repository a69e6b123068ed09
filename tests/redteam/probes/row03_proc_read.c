/* REDTEAM row 3: read /proc/kcore, /proc/keys, /proc/timer_list, /sys/firmware (and friends).
 * Safe outcome: absent, unreadable, or masked (reads return nothing: /dev/null or an empty
 * read-only tmpfs). /sys must not exist at all in a native sandbox. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "probe.h"

static void try_read(const char *path) {
  char what[128];
  snprintf(what, sizeof what, "read %s", path);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    static const int ok[] = {ENOENT, EACCES, EPERM, 0};
    expect_fail_list("row03", what, -1, e, ok);
    return;
  }
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  int e = errno;
  close(fd);
  if (n == 0) SAFE("row03", what, "masked (empty)");
  else if (n < 0) {
    static const int ok[] = {EACCES, EPERM, EIO, EINVAL, 0};
    expect_fail_list("row03", what, n, e, ok);
  } else UNSAFE("row03", what, "read %zd bytes", n);
}

static void try_list(const char *path) {
  char what[128];
  snprintf(what, sizeof what, "list %s", path);
  DIR *d = opendir(path);
  if (!d) {
    int e = errno;
    static const int ok[] = {ENOENT, EACCES, 0};
    expect_fail_list("row03", what, -1, e, ok);
    return;
  }
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)))
    if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..")) n++;
  closedir(d);
  if (n) UNSAFE("row03", what, "%d entries", n);
  else SAFE("row03", what, "masked (empty)");
}

int main(void) {
  const char *files[] = {"/proc/kcore",       "/proc/keys",       "/proc/timer_list", "/proc/sched_debug",
                         "/proc/kallsyms",    "/proc/kmsg",       "/proc/kpagecount", "/proc/kpageflags",
                         "/proc/config.gz",   "/proc/latency_stats", "/sys/firmware/dmi/tables/DMI",
                         "/sys/kernel/security/lsm", "/sys/fs/cgroup/cgroup.procs"};
  for (size_t i = 0; i < sizeof files / sizeof *files; ++i) try_read(files[i]);
  try_list("/sys/firmware");
  try_list("/proc/acpi");
  try_list("/proc/driver");
  struct stat st;
  EXPECT_FAIL("row03", "stat /sys", stat("/sys", &st), ENOENT);
  return probe_exit();
}
