/* REDTEAM row 23: mknod a block device.
 * Safe outcome: mknod of block and character devices fails with EPERM (FIFOs still work),
 * and /dev holds only the minimal set: no disk, memory or kernel-log device. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "probe.h"

int main(void) {
  EXPECT_FAIL("row23", "mknod block 8:0 (sda)", mknod("/tmp/row23-sda", S_IFBLK | 0600, makedev(8, 0)), EPERM);
  EXPECT_FAIL("row23", "mknod block 254:0 (vda)", mknod("/tmp/row23-vda", S_IFBLK | 0600, makedev(254, 0)), EPERM);
  EXPECT_FAIL("row23", "mknod char 1:1 (mem)", mknod("/tmp/row23-mem", S_IFCHR | 0600, makedev(1, 1)), EPERM);
  EXPECT_FAIL("row23", "mknodat block in /sandbox", mknodat(AT_FDCWD, "/sandbox/row23-blk", S_IFBLK | 0600, makedev(8, 0)),
              EPERM);
  if (mkfifo("/tmp/row23-fifo", 0600) == 0) NOTE("row23", "mkfifo works (allowed on purpose)");
  const char *devs[] = {"/dev/mem", "/dev/kmem", "/dev/port", "/dev/sda", "/dev/vda", "/dev/kmsg", "/dev/fuse",
                        "/dev/kvm", "/dev/net/tun", "/dev/console", "/dev/tty0", "/dev/loop0", "/dev/loop-control"};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; ++i) {
    char what[64];
    snprintf(what, sizeof what, "open %s", devs[i]);
    EXPECT_FAIL("row23", what, open(devs[i], O_RDONLY), ENOENT);
  }
  static const char *allowed[] = {"null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx",
                                  "fd",   "stdin", "stdout", "stderr", "shm", ".", ".."};
  DIR *d = opendir("/dev");
  struct dirent *e;
  char extra[256] = "";
  while (d && (e = readdir(d))) {
    int ok = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; ++i) ok |= !strcmp(e->d_name, allowed[i]);
    if (!ok) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s ", e->d_name);
  }
  if (d) closedir(d);
  if (extra[0]) UNSAFE("row23", "/dev contents", "unexpected entries: %s", extra);
  else SAFE("row23", "/dev contents", "only the minimal set");
  return probe_exit();
}
