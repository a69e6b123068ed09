/* REDTEAM row 1: read the host's /etc/shadow, /root and the project checkout.
 * Safe outcome: each is absent (ENOENT) or unreadable (EACCES); /etc/passwd is the
 * sandbox's own (no host accounts). argv[1..] are extra host paths that must be absent
 * (the test passes the project checkout and its build directory). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "probe.h"

int main(int argc, char **argv) {
  EXPECT_FAIL("row01", "open /etc/shadow", open("/etc/shadow", O_RDONLY), ENOENT, EACCES);
  EXPECT_FAIL("row01", "open /etc/gshadow", open("/etc/gshadow", O_RDONLY), ENOENT, EACCES);
  EXPECT_FAIL("row01", "opendir /root", (long)(opendir("/root") ? 0 : -1), ENOENT, EACCES);
  EXPECT_FAIL("row01", "open /root/.bash_history", open("/root/.bash_history", O_RDONLY), ENOENT, EACCES);
  EXPECT_FAIL("row01", "open /root/.ssh/authorized_keys", open("/root/.ssh/authorized_keys", O_RDONLY), ENOENT,
              EACCES);
  EXPECT_FAIL("row01", "stat /work", ({ struct stat st; stat("/work", &st); }), ENOENT, EACCES);
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    char what[300];
    snprintf(what, sizeof what, "stat host path %s", argv[i]);
    EXPECT_FAIL("row01", what, stat(argv[i], &st), ENOENT, EACCES);
  }
  /* /etc/passwd must not list the host's accounts (only root, sandbox, nobody). */
  FILE *f = fopen("/etc/passwd", "r");
  if (!f) {
    SAFE("row01", "/etc/passwd", "absent (%s)", strerror(errno));
  } else {
    char line[512];
    int foreign = 0;
    char first_foreign[64] = "";
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "root:", 5) && strncmp(line, "sandbox:", 8) && strncmp(line, "nobody:", 7)) {
        if (!foreign++) snprintf(first_foreign, sizeof first_foreign, "%.*s", (int)strcspn(line, ":"), line);
      }
    }
    fclose(f);
    if (foreign) UNSAFE("row01", "/etc/passwd", "%d host account(s), e.g. '%s'", foreign, first_foreign);
    else SAFE("row01", "/etc/passwd", "only the sandbox's own accounts");
  }
  /* /home must hold nothing of the host's users. */
  DIR *d = opendir("/home");
  int entries = 0;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) entries++;
    closedir(d);
  }
  if (entries) UNSAFE("row01", "/home", "%d entries visible", entries);
  else SAFE("row01", "/home", "empty or absent");
  return probe_exit();
}
