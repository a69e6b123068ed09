/* REDTEAM row 22: chroot escape via fchdir.
 * The classic escape: keep an fd to ".", chroot into a subdirectory, fchdir back out, walk
 * ".." many times, chroot("."). Safe outcome: chroot and pivot_root fail with EPERM, the
 * walk ends at the sandbox's own root, and host paths stay absent afterwards. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  mkdir("/tmp/row22-jail", 0755);
  int outside = open("/", O_RDONLY | O_DIRECTORY);
  EXPECT_FAIL("row22", "chroot(/tmp/row22-jail)", chroot("/tmp/row22-jail"), EPERM);
  if (fchdir(outside) != 0) UNSAFE("row22", "fchdir", "failed: %s", strerror(errno));
  for (int i = 0; i < 256; ++i)
    if (chdir("..") != 0) break;
  EXPECT_FAIL("row22", "chroot(.) after walking ..", chroot("."), EPERM);
  EXPECT_FAIL("row22", "pivot_root(., .)", syscall(SYS_pivot_root, ".", "."), EPERM);
  struct stat root, here, st;
  stat("/", &root);
  stat(".", &here);
  if (here.st_dev == root.st_dev && here.st_ino == root.st_ino) SAFE("row22", "walk ..", "stops at the sandbox root");
  else UNSAFE("row22", "walk ..", "left the sandbox root");
  EXPECT_FAIL("row22", "stat work (host checkout) after the walk", stat("work", &st), ENOENT);
  EXPECT_FAIL("row22", "stat etc/shadow after the walk", stat("etc/shadow", &st), ENOENT);
  return probe_exit();
}
