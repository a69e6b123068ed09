/* REDTEAM row 16: TIOCSTI into the controlling terminal (also with high bits set).
 * Safe outcome: no terminal is inherited (stdio are pipes, /dev/tty gives ENXIO: setsid),
 * and TIOCSTI / TIOCLINUX fail with EPERM on any fd - including a pty the sandbox opens
 * itself and request numbers with the upper 32 bits set. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  for (int fd = 0; fd < 3; ++fd) {
    char what[32];
    snprintf(what, sizeof what, "isatty(%d)", fd);
    if (isatty(fd)) UNSAFE("row16", what, "fd %d is a terminal inherited from outside", fd);
    else SAFE("row16", what, "not a terminal");
  }
  EXPECT_FAIL("row16", "open /dev/tty", open("/dev/tty", O_RDWR), ENXIO);
  char c = 'x';
  EXPECT_FAIL("row16", "TIOCSTI on stdin", ioctl(0, TIOCSTI, &c), EPERM);
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
    UNSAFE("row16", "open a pty", "failed (%s): the TIOCSTI checks below prove less", strerror(errno));
  }
  int s = m >= 0 ? open(ptsname(m), O_RDWR | O_NOCTTY) : -1;
  int fd = s >= 0 ? s : 0;
  EXPECT_FAIL("row16", "TIOCSTI on a pty", ioctl(fd, TIOCSTI, &c), EPERM);
  EXPECT_FAIL("row16", "TIOCSTI with high bits (1<<32)", syscall(SYS_ioctl, fd, (1UL << 32) | TIOCSTI, &c), EPERM);
  EXPECT_FAIL("row16", "TIOCSTI with high bits (0xffffffff<<32)",
              syscall(SYS_ioctl, fd, 0xffffffff00000000UL | TIOCSTI, &c), EPERM);
  char sub = 6; /* TIOCL_GETFGCONSOLE-ish subcode; harmless */
  EXPECT_FAIL("row16", "TIOCLINUX", ioctl(fd, TIOCLINUX, &sub), EPERM);
  EXPECT_FAIL("row16", "TIOCLINUX with high bits", syscall(SYS_ioctl, fd, (1UL << 40) | TIOCLINUX, &sub), EPERM);
  return probe_exit();
}
