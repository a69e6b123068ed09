/* REDTEAM row 13: find docker.sock / the corral API socket.
 * argv[1..] = extra paths that must be absent (the test passes corral's state dir).
 * Safe outcome: every well-known control socket is absent, and a walk of the whole sandbox
 * filesystem (except /proc and the read-only host /usr) finds no unix socket at all. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <sys/stat.h>

#include "probe.h"

static int sockets_found;
static char first_socket[256];

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_D && (!strcmp(path, "/proc") || !strcmp(path, "/usr"))) return FTW_SKIP_SUBTREE;
  if (S_ISSOCK(st->st_mode)) {
    if (!sockets_found++) snprintf(first_socket, sizeof first_socket, "%s", path);
  }
  return FTW_CONTINUE;
}

int main(int argc, char **argv) {
  const char *paths[] = {"/var/run/docker.sock",           "/run/docker.sock",
                         "/run/containerd/containerd.sock", "/run/podman/podman.sock",
                         "/run/user/0/podman/podman.sock",  "/run/corral",
                         "/var/run/corral",                "/run/corral/corral.sock",
                         "/var/lib/corral",                "/run/dbus/system_bus_socket",
                         "/run/systemd/private",           "/run/systemd/journal/socket",
                         "/var/run/crio/crio.sock",        "/run/k3s/containerd/containerd.sock"};
  struct stat st;
  for (size_t i = 0; i < sizeof paths / sizeof *paths; ++i) {
    char what[128];
    snprintf(what, sizeof what, "stat %s", paths[i]);
    EXPECT_FAIL("row13", what, lstat(paths[i], &st), ENOENT);
  }
  for (int i = 1; i < argc; ++i) {
    char what[300];
    snprintf(what, sizeof what, "stat %s", argv[i]);
    EXPECT_FAIL("row13", what, lstat(argv[i], &st), ENOENT);
  }
  nftw("/", visit, 32, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
  if (sockets_found) UNSAFE("row13", "unix sockets in the filesystem", "%d, e.g. %s", sockets_found, first_socket);
  else SAFE("row13", "unix sockets in the filesystem", "none (outside /proc and /usr)");
  return probe_exit();
}
