/* REDTEAM rows 35 and 18 (copy-out side): plant traps for get_files / put_files.
 * Creates in /sandbox: link -> /etc/shadow, dotdot -> ../../../../../../etc/shadow,
 * rootdir -> /, procroot -> /proc/1/root, selfroot -> /proc/self/root, fifo (a FIFO),
 * etcdir -> /etc, hostfile -> argv[1] (a host path), and dev -> /dev/zero.
 * The test then asks get_files / put_files for these and asserts they are refused (or
 * stay inside the sandbox) and that nothing is written on the host. */
#include <sys/stat.h>

#include "probe.h"

static void plant(const char *target, const char *name) {
  char what[128];
  snprintf(what, sizeof what, "plant %s -> %s", name, target);
  unlink(name);
  if (symlink(target, name) == 0) SAFE("row35", what, "planted");
  else UNSAFE("row35", what, "could not plant: %s (nothing tested)", strerror(errno));
}

int main(int argc, char **argv) {
  if (chdir("/sandbox") != 0) return 2;
  plant("/etc/shadow", "link");
  plant("../../../../../../etc/shadow", "dotdot");
  plant("/", "rootdir");
  plant("/proc/1/root", "procroot");
  plant("/proc/self/root", "selfroot");
  plant("/etc", "etcdir");
  plant("/dev/zero", "dev");
  plant(argc > 1 ? argv[1] : "/tmp/corral-host-target", "hostfile");
  unlink("fifo");
  if (mkfifo("fifo", 0644) == 0) SAFE("row35", "plant fifo", "planted");
  else UNSAFE("row35", "plant fifo", "could not plant: %s", strerror(errno));
  return probe_exit();
}
