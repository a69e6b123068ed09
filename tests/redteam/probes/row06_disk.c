/* REDTEAM row 6: fill the disk (write 50 GiB).
 * argv[1] = file_size_bytes, argv[2] = disk_bytes of the policy.
 * Safe outcome: one file stops at the file size limit with EFBIG (SIGXFSZ ignored); many
 * files stop at the disk cap with ENOSPC; the writable root (/sandbox), /tmp and /dev/shm
 * share that cap; a 50 GiB fallocate / ftruncate is refused. Writing is capped at 4x the
 * disk limit so a missing limit is reported, not used against the host. */
#include <fcntl.h>
#include <signal.h>

#include "probe.h"

#define MiB (1024L * 1024L)
static char buf[1 << 20];

/* Writes up to `max` bytes to `path`; returns bytes written, *err = errno of the failure. */
static long fill(const char *path, long max, int *err) {
  *err = 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    *err = errno;
    return 0;
  }
  long total = 0;
  while (total < max) {
    ssize_t w = write(fd, buf, sizeof buf);
    if (w < 0) {
      *err = errno;
      break;
    }
    total += w;
    if (w < (ssize_t)sizeof buf) { /* short write at a limit: the next one reports why */
      w = write(fd, buf, sizeof buf);
      *err = w < 0 ? errno : 0;
      if (w > 0) total += w;
      break;
    }
  }
  close(fd);
  return total;
}

int main(int argc, char **argv) {
  long fsize = argc > 1 ? atol(argv[1]) : 16 * MiB;
  long disk = argc > 2 ? atol(argv[2]) : 64 * MiB;
  signal(SIGXFSZ, SIG_IGN);
  memset(buf, 'x', sizeof buf);
  int err;

  long one = fill("/tmp/row06-one", 50L << 30 < 4 * disk ? 50L << 30 : 4 * disk, &err);
  if (err == EFBIG && one <= fsize) SAFE("row06", "one big file", "EFBIG at %ld MiB (limit %ld MiB)", one / MiB, fsize / MiB);
  else UNSAFE("row06", "one big file", "wrote %ld MiB, stopped by %s (file limit %ld MiB)", one / MiB,
              err ? strerror(err) : "nothing", fsize / MiB);
  unlink("/tmp/row06-one");

  int fd = open("/tmp/row06-sparse", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_FAIL("row06", "ftruncate 50 GiB", ftruncate(fd, 50L << 30), EFBIG, ENOSPC);
  EXPECT_FAIL("row06", "fallocate 50 GiB", fallocate(fd, 0, 0, 50L << 30), EFBIG, ENOSPC);
  close(fd);
  unlink("/tmp/row06-sparse");

  /* Many files, each under the file limit, until the shared cap. */
  long total = 0;
  int last_err = 0;
  char path[64];
  for (int i = 0; total < 4 * disk; ++i) {
    snprintf(path, sizeof path, "/tmp/row06-fill.%d", i);
    long w = fill(path, fsize - MiB, &err);
    total += w;
    if (err) {
      last_err = err;
      break;
    }
  }
  if ((last_err == ENOSPC || last_err == EDQUOT) && total <= disk + MiB)
    SAFE("row06", "fill /tmp", "%s after %ld MiB (disk limit %ld MiB)", strerror(last_err), total / MiB, disk / MiB);
  else UNSAFE("row06", "fill /tmp", "wrote %ld MiB, stopped by %s (disk limit %ld MiB)", total / MiB,
              last_err ? strerror(last_err) : "nothing", disk / MiB);

  /* /tmp is full now: the writable root and /dev/shm must be full too (one shared cap). */
  const char *others[] = {"/sandbox/row06-more", "/dev/shm/row06-more", "/var/tmp/row06-more"};
  for (int i = 0; i < 3; ++i) {
    long w = fill(others[i], 4 * MiB, &err);
    char what[96];
    snprintf(what, sizeof what, "write %s after /tmp filled", others[i]);
    /* ENOSPC is the expected answer; any other failure before 2 MiB also wrote nothing
     * that counts (e.g. /var/tmp cannot be copied up at all: EOVERFLOW). */
    if (err && w <= 2 * MiB) SAFE("row06", what, "%s after %ld KiB", strerror(err), w / 1024);
    else UNSAFE("row06", what, "wrote %ld KiB (%s): not covered by the disk cap", w / 1024, err ? strerror(err) : "no error");
  }
  return probe_exit();
}
