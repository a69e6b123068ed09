/* REDTEAM row 18: use a leaked host fd or cwd (CVE-2024-21626).
 * Safe outcome: only fds 0-2 are open (every other fd number gives EBADF), none of them is
 * a file or directory of the host; the cwd is inside the sandbox (getcwd works and is not
 * "(unreachable)"), and walking ".." from it ends at the sandbox's "/". */
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "probe.h"

int main(void) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  int open_fds = 0;
  char list[256] = "";
  for (int fd = 3; fd < (int)rl.rlim_cur && fd < 65536; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
      open_fds++;
      char l[512], path[32];
      snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
      ssize_t n = readlink(path, l, sizeof l - 1);
      l[n > 0 ? n : 0] = '\0';
      snprintf(list + strlen(list), sizeof list - strlen(list), "%d->%s ", fd, l);
    }
  }
  if (open_fds) UNSAFE("row18", "fds above 2", "%d open: %s", open_fds, list);
  else SAFE("row18", "fds above 2", "none open (EBADF up to %lu)", (unsigned long)rl.rlim_cur);
  for (int fd = 0; fd < 3; ++fd) {
    struct stat st;
    char what[32];
    snprintf(what, sizeof what, "fd %d", fd);
    if (fstat(fd, &st) != 0) SAFE("row18", what, "closed");
    else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)) SAFE("row18", what, "pipe/char/socket");
    else UNSAFE("row18", what, "is a regular file or directory (mode %o)", st.st_mode);
  }
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) UNSAFE("row18", "getcwd", "failed: %s (cwd outside the root?)", strerror(errno));
  else if (cwd[0] != '/') UNSAFE("row18", "getcwd", "'%s' is not reachable from /", cwd);
  else SAFE("row18", "getcwd", "%s", cwd);
  char l[4096];
  ssize_t n = readlink("/proc/self/cwd", l, sizeof l - 1);
  l[n > 0 ? n : 0] = '\0';
  if (n > 0 && l[0] == '/' && !strstr(l, "(unreachable)")) SAFE("row18", "/proc/self/cwd", "%s", l);
  else UNSAFE("row18", "/proc/self/cwd", "'%s'", l);
  struct stat root, here;
  stat("/", &root);
  for (int i = 0; i < 64; ++i)
    if (chdir("..") != 0) break;
  stat(".", &here);
  if (here.st_dev == root.st_dev && here.st_ino == root.st_ino) SAFE("row18", "walk .. from cwd", "stops at the sandbox root");
  else UNSAFE("row18", "walk .. from cwd", "ended outside the sandbox root");
  n = readlink("/proc/self/root", l, sizeof l - 1);
  l[n > 0 ? n : 0] = '\0';
  if (n == 1 && l[0] == '/') SAFE("row18", "/proc/self/root", "/");
  else UNSAFE("row18", "/proc/self/root", "'%s'", l);
  return probe_exit();
}
