/* REDTEAM row 20: mount tmpfs, fsopen, open_tree, move_mount (and friends).
 * Safe outcome: every mount API fails with EPERM; read-only mounts stay read-only. */
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  EXPECT_FAIL("row20", "mount tmpfs on /tmp", mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m"), EPERM);
  EXPECT_FAIL("row20", "mount proc on /tmp", mount("proc", "/tmp", "proc", 0, NULL), EPERM);
  EXPECT_FAIL("row20", "remount /usr read-write", mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
  EXPECT_FAIL("row20", "bind / onto /tmp", mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL), EPERM);
  EXPECT_FAIL("row20", "umount2 /proc", umount2("/proc", MNT_DETACH), EPERM);
  EXPECT_FAIL("row20", "umount2 /proc/sys (unmask)", umount2("/proc/sys", MNT_DETACH), EPERM);
  EXPECT_FAIL("row20", "fsopen(tmpfs)", syscall(SYS_fsopen, "tmpfs", 0), EPERM);
  EXPECT_FAIL("row20", "fspick(/usr)", syscall(SYS_fspick, AT_FDCWD, "/usr", 0), EPERM);
  EXPECT_FAIL("row20", "open_tree(/, CLONE)", syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE), EPERM);
  EXPECT_FAIL("row20", "move_mount", syscall(SYS_move_mount, AT_FDCWD, "/tmp", AT_FDCWD, "/mnt", 0), EPERM);
  struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY};
  EXPECT_FAIL("row20", "mount_setattr(/usr, clear RDONLY)",
              syscall(SYS_mount_setattr, AT_FDCWD, "/usr", 0, &attr, sizeof attr), EPERM);
  EXPECT_FAIL("row20", "create a file in /usr", open("/usr/row20-probe", O_WRONLY | O_CREAT, 0644), EROFS, EACCES);
  return probe_exit();
}
