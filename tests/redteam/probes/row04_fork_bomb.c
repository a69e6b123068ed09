/* REDTEAM row 4: fork bomb.
 * Safe outcome: fork() starts failing with EAGAIN once the sandbox holds about `pids` tasks
 * (argv[1] is that limit); the host is untouched (the test checks it). Part 1 forks sleepers
 * in a loop; part 2 releases them and runs a genuinely recursive bomb (every child forks too)
 * for one second, which must also hit the limit and leave this probe responsive. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "probe.h"

int main(int argc, char **argv) {
  long limit = argc > 1 ? atol(argv[1]) : 64;
  long cap = limit * 4 + 64; /* never try more: a missing limit is reported, not exploited */
  pid_t *kids = calloc((size_t)cap, sizeof *kids);
  long made = 0;
  int err = 0;
  for (long i = 0; i < cap; ++i) {
    pid_t p = fork();
    if (p == 0) {
      for (;;) pause();
    }
    if (p < 0) {
      err = errno;
      break;
    }
    kids[made++] = p;
  }
  if (err == EAGAIN && made <= limit) SAFE("row04", "fork loop", "EAGAIN after %ld children (limit %ld)", made, limit);
  else if (err) UNSAFE("row04", "fork loop", "stopped by %s after %ld children (limit %ld)", strerror(err), made, limit);
  else UNSAFE("row04", "fork loop", "made %ld children without hitting a limit of %ld", made, limit);

  for (long i = 0; i < made; ++i) kill(kids[i], SIGKILL);
  for (long i = 0; i < made; ++i) waitpid(kids[i], NULL, 0);

  pid_t bomber = fork();
  if (bomber == 0) {
    setpgid(0, 0);
    long forks = 0, fails = 0;
    time_t end = time(NULL) + 2;
    while (time(NULL) < end) {
      pid_t p = fork();
      if (p > 0) forks++;
      else if (p < 0) fails++;
    }
    _exit(0);
  }
  if (bomber < 0) {
    UNSAFE("row04", "recursive bomb", "could not start after the sleepers were reaped: %s", strerror(errno));
    return probe_exit();
  }
  setpgid(bomber, bomber);
  sleep(3);
  kill(-bomber, SIGKILL);
  waitpid(bomber, NULL, 0);
  /* The slots come back once the bomb is dead: fork works again. */
  usleep(200 * 1000);
  pid_t again = fork();
  if (again == 0) _exit(0);
  if (again > 0) {
    waitpid(again, NULL, 0);
    SAFE("row04", "recursive bomb", "ran 2 s inside the sandbox; the probe stayed responsive and can fork again");
  } else {
    UNSAFE("row04", "recursive bomb", "fork still fails after the bomb was killed: %s", strerror(errno));
  }
  return probe_exit();
}
