/* REDTEAM row 29: setuid(0), rewrite uid_map.
 * Safe outcome: setuid/setresuid/setgid/setgroups to 0 fail with EPERM; uid_map, gid_map and
 * setgroups cannot be rewritten (open or write fails); the existing map sends every
 * sandbox id to an unprivileged host id (>= 2^30, never host root). */
#include <fcntl.h>
#include <grp.h>

#include "probe.h"

static void try_rewrite(const char *path, const char *data) {
  char what[96];
  snprintf(what, sizeof what, "rewrite %s", path);
  int fd = open(path, O_WRONLY);
  if (fd < 0) {
    int e = errno;
    static const int ok[] = {EACCES, EPERM, ENOENT, 0}; /* ENOENT: /proc/1 hidden (hidepid) */
    expect_fail_list("row29", what, -1, e, ok);
    return;
  }
  ssize_t w = write(fd, data, strlen(data));
  int e = errno;
  close(fd);
  static const int ok[] = {EPERM, EACCES, EINVAL, 0};
  expect_fail_list("row29", what, w, e, ok);
}

int main(void) {
  EXPECT_FAIL("row29", "setuid(0)", setuid(0), EPERM);
  EXPECT_FAIL("row29", "setresuid(0,0,0)", setresuid(0, 0, 0), EPERM);
  EXPECT_FAIL("row29", "setreuid(0,0)", setreuid(0, 0), EPERM);
  EXPECT_FAIL("row29", "setgid(0)", setgid(0), EPERM);
  EXPECT_FAIL("row29", "setgroups(1, {0})", ({ gid_t g = 0; setgroups(1, &g); }), EPERM);
  try_rewrite("/proc/self/uid_map", "0 0 4294967295\n");
  try_rewrite("/proc/self/gid_map", "0 0 4294967295\n");
  try_rewrite("/proc/self/setgroups", "allow\n");
  try_rewrite("/proc/1/uid_map", "0 0 4294967295\n");
  FILE *f = fopen("/proc/self/uid_map", "r");
  unsigned inside, host, count;
  int lines = 0, bad = 0;
  while (f && fscanf(f, "%u %u %u", &inside, &host, &count) == 3) {
    lines++;
    NOTE("row29", "uid_map: %u -> host %u (%u)", inside, host, count);
    if (host < (1u << 30) || count > 1) bad++;
  }
  if (f) fclose(f);
  if (lines && !bad) SAFE("row29", "uid_map", "%d single-id lines, all to host ids >= 2^30", lines);
  else UNSAFE("row29", "uid_map", "%d lines, %d map to a low host id or a range", lines, bad);
  if (getuid() == 1000 && geteuid() == 1000) SAFE("row29", "still uid 1000", "yes");
  else UNSAFE("row29", "still uid 1000", "uid %u euid %u", getuid(), geteuid());
  return probe_exit();
}
