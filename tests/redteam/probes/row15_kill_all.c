/* REDTEAM row 15: kill processes outside the sandbox (kill -9 -1).
 * Safe outcome: kill(-1, SIGKILL) reaches only the sandbox's own processes: a sleeper this
 * probe started dies, the probe itself and corral-init survive, and (checked by the test)
 * the test process and canary processes on the host - one with the very same host uid as
 * this sandbox's user - are alive afterwards. */
#include <signal.h>
#include <sys/wait.h>

#include "probe.h"

int main(void) {
  pid_t victim = fork();
  if (victim == 0) {
    for (;;) pause();
  }
  if (victim < 0) return 2;
  int r = kill(-1, SIGKILL);
  int e = errno;
  int st = 0;
  pid_t w = waitpid(victim, &st, 0);
  if (r == 0 && w == victim && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
    SAFE("row15", "kill(-1, SIGKILL)", "delivered inside the sandbox (own sleeper died); probe survived");
  else
    UNSAFE("row15", "kill(-1, SIGKILL)", "unexpected: kill returned %d (%s), sleeper status %#x", r, strerror(e), st);
  EXPECT_FAIL("row15", "kill(1, SIGKILL) (init)", kill(1, SIGKILL), EPERM);
  return probe_exit();
}
