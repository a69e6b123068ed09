/* REDTEAM row 39: one sandbox reads or writes another's files.
 * argv[1] = "write" MARK: writes MARK to /tmp/row39-secret, /sandbox/row39-secret and
 *           /dev/shm/row39-secret (run in sandbox A).
 * argv[1] = "look" MARK: run in sandbox B at the same time; safe when none of those files
 *           exists here and no visible process belongs to another sandbox. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "probe.h"

static const char *files[] = {"/tmp/row39-secret", "/sandbox/row39-secret", "/dev/shm/row39-secret"};

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  if (!strcmp(argv[1], "write")) {
    for (int i = 0; i < 3; ++i) {
      int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || write(fd, argv[2], strlen(argv[2])) != (ssize_t)strlen(argv[2])) {
        UNSAFE("row39", "write secret", "%s: %s (nothing tested)", files[i], strerror(errno));
      } else {
        SAFE("row39", "write secret", "%s written", files[i]);
      }
      if (fd >= 0) close(fd);
    }
    return probe_exit();
  }
  for (int i = 0; i < 3; ++i) {
    char what[96];
    snprintf(what, sizeof what, "open other sandbox's %s", files[i]);
    EXPECT_FAIL("row39", what, open(files[i], O_RDONLY), ENOENT);
  }
  int procs = 0;
  DIR *d = opendir("/proc");
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (isdigit((unsigned char)e->d_name[0])) procs++;
  if (d) closedir(d);
  if (procs <= 2) SAFE("row39", "visible processes", "%d (init and me)", procs);
  else UNSAFE("row39", "visible processes", "%d: more than init and me", procs);
  return probe_exit();
}
