/* REDTEAM row 34: write cgroup.procs, mount cgroupfs, release_agent (CVE-2022-0492).
 * Safe outcome: no cgroupfs is reachable (/sys absent: ENOENT), mounting cgroup v1 or v2
 * fails with EPERM, no cgroup filesystem shows in mountinfo, and /proc/self/cgroup shows
 * only "/" paths (a cgroup namespace: the host's hierarchy is not revealed). */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "probe.h"

int main(void) {
  EXPECT_FAIL("row34", "open /sys/fs/cgroup/cgroup.procs for write", open("/sys/fs/cgroup/cgroup.procs", O_WRONLY), ENOENT);
  EXPECT_FAIL("row34", "open /sys/fs/cgroup/memory/release_agent",
              open("/sys/fs/cgroup/memory/release_agent", O_WRONLY), ENOENT);
  mkdir("/tmp/row34-cg", 0755);
  EXPECT_FAIL("row34", "mount cgroup v1 (memory)", mount("cgroup", "/tmp/row34-cg", "cgroup", 0, "memory"), EPERM);
  EXPECT_FAIL("row34", "mount cgroup v1 (rdma, release_agent)",
              mount("cgroup", "/tmp/row34-cg", "cgroup", 0, "rdma,release_agent=/tmp/x"), EPERM);
  EXPECT_FAIL("row34", "mount cgroup2", mount("cgroup2", "/tmp/row34-cg", "cgroup2", 0, NULL), EPERM);
  FILE *f = fopen("/proc/self/mountinfo", "r");
  char line[1024];
  int cg = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, " - cgroup")) cg++;
  if (f) fclose(f);
  if (cg) UNSAFE("row34", "cgroup mounts in mountinfo", "%d", cg);
  else SAFE("row34", "cgroup mounts in mountinfo", "none");
  f = fopen("/proc/self/cgroup", "r");
  int lines = 0, leaks = 0;
  char first[256] = "";
  while (f && fgets(line, sizeof line, f)) {
    lines++;
    char *path = strrchr(line, ':');
    if (path && strcmp(path, ":/\n")) {
      if (!leaks++) snprintf(first, sizeof first, "%s", line);
    }
  }
  if (f) fclose(f);
  if (!lines) SAFE("row34", "/proc/self/cgroup", "unreadable");
  else if (leaks) UNSAFE("row34", "/proc/self/cgroup", "%d lines reveal host cgroup paths, e.g. %s", leaks, first);
  else SAFE("row34", "/proc/self/cgroup", "%d lines, all '/' (cgroup namespace)", lines);
  return probe_exit();
}
