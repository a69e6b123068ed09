/* REDTEAM row 9: double-fork + setsid a daemon to outlive the run.
 * argv[1] = "detach" (the daemon closes stdio, like a real daemon) | "hold" (it keeps the
 * stdout pipe open, to also try to hang the supervisor) | "check" (a later exec: is the
 * daemon recorded in /tmp/row09.pid still alive?).
 * The daemon renames itself "crl-row09-dmn" so the test can look for it on the host, writes
 * its pid to /tmp/row09.pid and sleeps for an hour. Safe outcome: it is gone once the exec
 * that started it has returned (checked on the host by the test, and by "check" here). */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "probe.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "detach";
  if (!strcmp(mode, "check")) {
    FILE *f = fopen("/tmp/row09.pid", "r");
    int pid = 0;
    if (!f || fscanf(f, "%d", &pid) != 1) {
      UNSAFE("row09", "daemon pid file", "missing: the daemon never started, nothing was tested");
      return probe_exit();
    }
    fclose(f);
    EXPECT_FAIL("row09", "daemon still alive (kill 0)", kill(pid, 0), ESRCH);
    return probe_exit();
  }
  int ready[2];
  if (pipe(ready) != 0) return 2;
  pid_t child = fork();
  if (child == 0) {
    setsid();
    signal(SIGHUP, SIG_IGN);
    if (fork() != 0) _exit(0);
    /* the daemon */
    prctl(PR_SET_NAME, "crl-row09-dmn");
    signal(SIGTERM, SIG_IGN);
    FILE *f = fopen("/tmp/row09.pid", "w");
    if (f) {
      fprintf(f, "%d\n", getpid());
      fclose(f);
    }
    if (!strcmp(mode, "detach")) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    close(ready[1]);
    close(ready[0]);
    for (int i = 0; i < 3600; ++i) sleep(1);
    _exit(0);
  }
  close(ready[1]);
  waitpid(child, NULL, 0);
  char c;
  if (read(ready[0], &c, 1) != 1) {
    UNSAFE("row09", "daemon start", "the daemon never reported in");
    return probe_exit();
  }
  FILE *f = fopen("/tmp/row09.pid", "r");
  int pid = 0;
  if (f) {
    if (fscanf(f, "%d", &pid) != 1) pid = 0;
    fclose(f);
  }
  printf("NOTE row09 daemon-started pid %d\n", pid);
  fflush(stdout);
  /* Give the supervisor time to read that line (and the test to look for the daemon on the
   * host) while the daemon is certainly alive; then the exec ends. */
  usleep(500 * 1000);
  SAFE("row09", "daemon start", "daemon %d running; the parent now exits", pid);
  return probe_exit();
}
