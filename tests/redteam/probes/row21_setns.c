/* REDTEAM row 21: setns into another namespace.
 * Safe outcome: setns fails with EPERM for every namespace fd we can get (our own and via a
 * pidfd); init's namespace files cannot even be opened (EACCES: not dumpable). */
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  const char *names[] = {"user", "mnt", "pid", "net", "uts", "ipc", "cgroup", "time"};
  char path[64], what[96];
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    snprintf(path, sizeof path, "/proc/self/ns/%s", names[i]);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
      snprintf(what, sizeof what, "open %s", path);
      SAFE("row21", what, "%s", strerror(errno));
      continue;
    }
    snprintf(what, sizeof what, "setns(%s)", names[i]);
    EXPECT_FAIL("row21", what, setns(fd, 0), EPERM);
    close(fd);
  }
  EXPECT_FAIL("row21", "open /proc/1/ns/mnt", open("/proc/1/ns/mnt", O_RDONLY), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row21", "open /proc/1/ns/user", open("/proc/1/ns/user", O_RDONLY), EACCES, EPERM, ENOENT);
  int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  EXPECT_FAIL("row21", "setns(pidfd, all namespaces)",
              setns(pfd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC), EPERM);
  int ifd = (int)syscall(SYS_pidfd_open, 1, 0);
  EXPECT_FAIL("row21", "setns(pidfd of init, mnt)", setns(ifd, CLONE_NEWNS), EPERM, EBADF);
  return probe_exit();
}
