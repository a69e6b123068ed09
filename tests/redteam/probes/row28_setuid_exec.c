/* REDTEAM row 28: exec a setuid-root binary (and a binary with file capabilities).
 * argv[1] = "whoami": print "ids r e s caps <CapEff>" and exit (the helper mode; the test
 * makes host-root-owned copies of this binary, one mode 04755, one with file caps
 * cap_setuid,cap_sys_admin+ep, and binds them at /suid).
 * Otherwise argv[1..] = helper paths to exec. Safe outcome: no_new_privs is set, and each
 * helper still runs as uid 1000 with no effective capabilities. */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "probe.h"

static void whoami(void) {
  uid_t r, e, s;
  getresuid(&r, &e, &s);
  char cap[64] = "?";
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%63s", cap);
  if (f) fclose(f);
  printf("ids %u %u %u caps %s\n", r, e, s, cap);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "whoami")) {
    whoami();
    return 0;
  }
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int nnp = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "NoNewPrivs:", 11)) nnp = atoi(line + 11);
  if (f) fclose(f);
  if (nnp == 1) SAFE("row28", "no_new_privs", "set");
  else UNSAFE("row28", "no_new_privs", "NoNewPrivs is %d", nnp);
  struct statvfs sv;
  if (statvfs("/usr/bin", &sv) == 0 && (sv.f_flag & ST_NOSUID)) SAFE("row28", "/usr nosuid", "mounted nosuid");
  else UNSAFE("row28", "/usr nosuid", "/usr/bin is not mounted nosuid");

  if (argc < 2) UNSAFE("row28", "helpers", "none given: nothing exec'd");
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    char what[160];
    snprintf(what, sizeof what, "exec %s", argv[i]);
    if (stat(argv[i], &st) != 0) {
      UNSAFE("row28", what, "helper missing (%s): nothing tested", strerror(errno));
      continue;
    }
    NOTE("row28", "%s mode %o owner %u", argv[i], st.st_mode & 07777, st.st_uid);
    int p[2];
    if (pipe(p) != 0) return 2;
    pid_t c = fork();
    if (c == 0) {
      dup2(p[1], 1);
      execl(argv[i], argv[i], "whoami", (char *)NULL);
      printf("exec failed %d\n", errno);
      _exit(127);
    }
    close(p[1]);
    char out[256] = "";
    ssize_t n = read(p[0], out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(p[0]);
    waitpid(c, NULL, 0);
    unsigned r, e, s;
    char cap[64];
    if (sscanf(out, "ids %u %u %u caps %63s", &r, &e, &s, cap) != 4) {
      UNSAFE("row28", what, "no answer from the helper: '%s'", out);
    } else if (r == 1000 && e == 1000 && s == 1000 && strspn(cap, "0") == strlen(cap)) {
      SAFE("row28", what, "still uid 1000, CapEff %s", cap);
    } else {
      UNSAFE("row28", what, "gained: uids %u/%u/%u CapEff %s", r, e, s, cap);
    }
  }
  return probe_exit();
}
