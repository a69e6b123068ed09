/* REDTEAM row 24: init_module / finit_module (and the other kernel-wide knobs).
 * Safe outcome: EPERM for each. Arguments are harmless even if a call were allowed. */
#include <fcntl.h>
#include <linux/reboot.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  static char image[64];
  EXPECT_FAIL("row24", "init_module", syscall(SYS_init_module, image, sizeof image, ""), EPERM);
  int fd = open("/dev/null", O_RDONLY);
  EXPECT_FAIL("row24", "finit_module", syscall(SYS_finit_module, fd, "", 0), EPERM);
  EXPECT_FAIL("row24", "delete_module", syscall(SYS_delete_module, "corral_no_such_module", O_NONBLOCK), EPERM);
  EXPECT_FAIL("row24", "kexec_load", syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL), EPERM);
  EXPECT_FAIL("row24", "kexec_file_load", syscall(SYS_kexec_file_load, fd, fd, 0UL, "", 0UL), EPERM);
  EXPECT_FAIL("row24", "reboot(CAD_ON)",
              syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, LINUX_REBOOT_CMD_CAD_ON, NULL), EPERM);
  EXPECT_FAIL("row24", "swapon", syscall(SYS_swapon, "/tmp/row24-swap", 0), EPERM);
  EXPECT_FAIL("row24", "acct", syscall(SYS_acct, "/tmp/row24-acct"), EPERM);
  EXPECT_FAIL("row24", "syslog(read all)", ({ char b[64]; syscall(SYS_syslog, 3, b, (int)sizeof b); }), EPERM);
  return probe_exit();
}
