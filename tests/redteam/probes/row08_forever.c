/* REDTEAM row 8: sleep / spin forever.
 * argv[1] = "sleep" | "spin" | "stubborn" (children that ignore SIGTERM/SIGHUP/SIGINT and spin,
 * in their own sessions) | "count" (run afterwards: prints how many other processes the
 * sandbox still holds; safe when 0).
 * Safe outcome (checked by the test): status timeout at the wall limit, nothing left behind. */
#include <dirent.h>
#include <signal.h>
#include <ctype.h>

#include "probe.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "sleep";
  if (!strcmp(mode, "sleep")) {
    for (;;) pause();
  } else if (!strcmp(mode, "spin")) {
    volatile unsigned long x = 0;
    for (;;) x++;
  } else if (!strcmp(mode, "stubborn")) {
    for (int i = 0; i < 4; ++i) {
      if (fork() == 0) {
        setsid();
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        volatile unsigned long x = 0;
        for (;;) x++;
      }
    }
    signal(SIGTERM, SIG_IGN);
    volatile unsigned long x = 0;
    for (;;) x++;
  } else if (!strcmp(mode, "count")) {
    DIR *d = opendir("/proc");
    int others = 0;
    struct dirent *e;
    pid_t me = getpid();
    while (d && (e = readdir(d))) {
      if (!isdigit((unsigned char)e->d_name[0])) continue;
      pid_t p = atoi(e->d_name);
      if (p != me && p != 1) others++;
    }
    if (d) closedir(d);
    if (others) UNSAFE("row08", "leftover processes", "%d other processes still in the sandbox", others);
    else SAFE("row08", "leftover processes", "none");
    return probe_exit();
  }
  return 2;
}
