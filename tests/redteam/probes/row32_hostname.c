/* REDTEAM row 32: sethostname visible to the host.
 * argv[1] = the hostname the policy set. Safe outcome: sethostname / setdomainname fail
 * with EPERM (and /proc/sys/kernel/hostname is read-only); uname shows the policy's name.
 * The test checks that the host's hostname is unchanged. */
#include <fcntl.h>
#include <sys/utsname.h>

#include "probe.h"

int main(int argc, char **argv) {
  const char *name = "corral-row32-pwned";
  EXPECT_FAIL("row32", "sethostname", sethostname(name, strlen(name)), EPERM);
  EXPECT_FAIL("row32", "setdomainname", setdomainname(name, strlen(name)), EPERM);
  int fd = -1;
  EXPECT_FAIL("row32", "write /proc/sys/kernel/hostname",
              (fd = open("/proc/sys/kernel/hostname", O_WRONLY)) < 0 ? -1 : write(fd, name, strlen(name)), EROFS, EACCES);
  if (fd >= 0) close(fd);
  struct utsname u;
  uname(&u);
  if (argc > 1 && !strcmp(u.nodename, argv[1])) SAFE("row32", "uname nodename", "%s (the policy's)", u.nodename);
  else UNSAFE("row32", "uname nodename", "'%s', expected '%s'", u.nodename, argc > 1 ? argv[1] : "?");
  return probe_exit();
}
