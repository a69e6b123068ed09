/* REDTEAM row 30: read the host's environment or secrets.
 * argv[1] = "env": argv[2..] are the variable names the policy allows; any other variable
 *           is UNSAFE. Every variable is echoed as "NOTE row30 env NAME=VALUE" so the test
 *           can also check that its own secret value appears nowhere.
 * argv[1] = "proc": the supervisor's environment and command line through corral-init
 *           (a clone of the supervisor, so its /proc/1/environ and /proc/1/cmdline are the
 *           supervisor's). Safe: both unreadable (EACCES, or ENOENT when /proc/1 is hidden)
 *           or empty / all NUL. The content read, if any, is echoed as NOTE lines. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

#include "probe.h"

extern char **environ;

/* Reads `path` into buf (NULs shown as spaces); returns how many bytes were not NUL
 * (a zeroed-out argv area carries no information), or -1 with *err set. */
static ssize_t slurp(const char *path, char *buf, size_t cap, int *err) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  ssize_t total = 0, n = 0, meaningful = 0;
  while ((size_t)total < cap - 1 && (n = read(fd, buf + total, cap - 1 - total)) > 0) total += n;
  *err = n < 0 ? errno : 0;
  close(fd);
  buf[total] = '\0';
  for (ssize_t i = 0; i < total; ++i) {
    if (buf[i] == '\0') buf[i] = ' ';
    else meaningful++;
  }
  return n < 0 ? -1 : meaningful;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "env";
  if (!strcmp(mode, "env")) {
    int extra = 0;
    for (char **e = environ; *e; ++e) {
      NOTE("row30", "env %s", *e);
      size_t n = strcspn(*e, "=");
      int allowed = 0;
      for (int i = 2; i < argc; ++i) allowed |= strlen(argv[i]) == n && !strncmp(*e, argv[i], n);
      if (!allowed) {
        extra++;
        UNSAFE("row30", "variable not on the allowlist", "%.*s", (int)n, *e);
      }
    }
    if (!extra) SAFE("row30", "environment", "only allowlisted variables");
    return probe_exit();
  }
  static char buf[65536];
  int err;
  ssize_t n = slurp("/proc/1/environ", buf, sizeof buf, &err);
  if (n < 0) SAFE("row30", "read /proc/1/environ (supervisor env)", "%s", strerror(err));
  else if (n == 0) SAFE("row30", "read /proc/1/environ (supervisor env)", "empty or zeroed");
  else {
    NOTE("row30", "/proc/1/environ: %s", buf);
    UNSAFE("row30", "read /proc/1/environ (supervisor env)", "%zd bytes readable", n);
  }
  n = slurp("/proc/1/cmdline", buf, sizeof buf, &err);
  if (n < 0) SAFE("row30", "read /proc/1/cmdline (supervisor argv)", "%s", strerror(err));
  else if (n == 0) SAFE("row30", "read /proc/1/cmdline (supervisor argv)", "empty or zeroed");
  else {
    NOTE("row30", "/proc/1/cmdline: %s", buf);
    UNSAFE("row30", "read /proc/1/cmdline (supervisor argv)", "%zd bytes of the supervisor's command line", n);
  }
  /* Any other process's environment (none should be foreign). */
  DIR *d = opendir("/proc");
  struct dirent *e;
  pid_t me = getpid();
  while (d && (e = readdir(d))) {
    if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == me || atoi(e->d_name) == 1) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
    if (slurp(path, buf, sizeof buf, &err) > 0) NOTE("row30", "%s: %s", path, buf);
  }
  if (d) closedir(d);
  return probe_exit();
}
