/* REDTEAM row 10: kill the supervisor / make it hang.
 * argv[1] = "attack" [host pid of the supervisor] | "sleep" (used by the test's
 * supervisor-death check: renames itself "crl-row10-slp", says "started" and sleeps).
 * Safe outcome: PID 1 (corral-init) and the parent cannot be signalled (EPERM), the
 * supervisor's host pid does not exist here (ESRCH); the test then checks that the
 * sandbox still runs programs. */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "probe.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "attack";
  if (!strcmp(mode, "sleep")) {
    prctl(PR_SET_NAME, "crl-row10-slp");
    printf("started\n");
    fflush(stdout);
    for (int i = 0; i < 600; ++i) sleep(1);
    return 0;
  }
  pid_t ppid = getppid();
  NOTE("row10", "my parent is pid %d", ppid);
  EXPECT_FAIL("row10", "kill(1, SIGKILL)", kill(1, SIGKILL), EPERM);
  EXPECT_FAIL("row10", "kill(1, SIGTERM)", kill(1, SIGTERM), EPERM);
  EXPECT_FAIL("row10", "kill(1, SIGSTOP)", kill(1, SIGSTOP), EPERM);
  EXPECT_FAIL("row10", "kill(getppid(), SIGKILL)", kill(ppid, SIGKILL), EPERM);
  int pfd = (int)syscall(SYS_pidfd_open, 1, 0);
  if (pfd >= 0) {
    EXPECT_FAIL("row10", "pidfd_send_signal(init, SIGKILL)", syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0), EPERM);
    close(pfd);
  } else {
    SAFE("row10", "pidfd_open(1)", "%s", strerror(errno));
  }
  if (argc > 2) {
    pid_t host = atoi(argv[2]);
    char what[64];
    snprintf(what, sizeof what, "kill(supervisor host pid %d, SIGKILL)", host);
    EXPECT_FAIL("row10", what, kill(host, SIGKILL), ESRCH);
  }
  return probe_exit();
}
