/* REDTEAM row 5: allocate 10 GiB.
 * argv[1] = mode, argv[2] = the policy's memory_bytes.
 *   private   : malloc 10 GiB at once, then 64 MiB chunks (touched) up to 10 GiB.
 *               Safe: allocation fails (ENOMEM) before passing the limit.
 *   shared    : MAP_SHARED|MAP_ANONYMOUS chunks (touched) up to 4x the limit.
 *   memfd     : memfd_create + write, files up to 4x the limit in total.
 *   multiproc : 4 processes each hold 0.75x the limit (3x in total).
 * Safe for every mode: the sandbox as a whole cannot hold more than memory_bytes. Attempts
 * are capped at 4x the limit so that a missing limit is reported, never used against the host. */
#include <sys/mman.h>
#include <sys/wait.h>

#include "probe.h"

#define MiB (1024L * 1024L)

static void touch(char *p, long n) {
  for (long i = 0; i < n; i += 4096) p[i] = 1;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "private";
  long limit = argc > 2 ? atol(argv[2]) : 256 * MiB;
  const long chunk = 16 * MiB;

  if (!strcmp(mode, "private")) {
    char *big = malloc(10L << 30);
    if (big) UNSAFE("row05", "malloc(10 GiB)", "returned a pointer");
    else SAFE("row05", "malloc(10 GiB)", "NULL (%s)", strerror(errno));
    free(big);
    long total = 0;
    int err = 0;
    while (total < (10L << 30)) {
      char *p = malloc(chunk);
      if (!p) {
        err = errno;
        break;
      }
      touch(p, chunk);
      total += chunk;
      if (total > 4 * limit) break;
    }
    if (err && total <= limit) SAFE("row05", "malloc in 16 MiB chunks", "%s after %ld MiB (limit %ld MiB)",
                                     strerror(err), total / MiB, limit / MiB);
    else UNSAFE("row05", "malloc in 16 MiB chunks", "held %ld MiB with a limit of %ld MiB", total / MiB, limit / MiB);
  } else if (!strcmp(mode, "shared")) {
    long total = 0;
    int err = 0;
    while (total <= limit + chunk && total < 4 * limit) {
      char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        err = errno;
        break;
      }
      touch(p, chunk);
      total += chunk;
    }
    if (total <= limit) SAFE("row05", "MAP_SHARED anonymous memory", "%s after %ld MiB (limit %ld MiB)",
                             strerror(err), total / MiB, limit / MiB);
    else UNSAFE("row05", "MAP_SHARED anonymous memory", "held %ld MiB (touched) with a limit of %ld MiB", total / MiB,
                limit / MiB);
  } else if (!strcmp(mode, "memfd")) {
    long total = 0;
    int err = 0;
    char *buf = malloc(MiB);
    memset(buf, 'x', MiB);
    while (total <= limit + chunk && total < 4 * limit && !err) {
      int fd = memfd_create("row05", 0);
      if (fd < 0) {
        err = errno;
        break;
      }
      for (long off = 0; off < chunk; off += MiB) {
        if (write(fd, buf, MiB) != MiB) {
          err = errno ? errno : ENOSPC;
          break;
        }
        total += MiB;
      }
      /* keep fd open: the memory stays charged to the sandbox */
    }
    if (total <= limit) SAFE("row05", "memfd pages", "%s after %ld MiB (limit %ld MiB)", strerror(err),
                             total / MiB, limit / MiB);
    else UNSAFE("row05", "memfd pages", "held %ld MiB with a limit of %ld MiB", total / MiB, limit / MiB);
  } else if (!strcmp(mode, "multiproc")) {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    long each = limit / 4 * 3;
    pid_t kids[4];
    for (int k = 0; k < 4; ++k) {
      kids[k] = fork();
      if (kids[k] == 0) {
        long got = 0;
        while (got + chunk <= each) {
          char *p = malloc(chunk);
          if (!p) break;
          touch(p, chunk);
          got += chunk;
        }
        if (write(fds[1], &got, sizeof got) != sizeof got) _exit(3);
        for (;;) pause();
      }
    }
    long total = 0;
    for (int k = 0; k < 4; ++k) {
      long got = 0;
      if (kids[k] > 0 && read(fds[0], &got, sizeof got) == sizeof got) total += got;
    }
    for (int k = 0; k < 4; ++k)
      if (kids[k] > 0) kill(kids[k], SIGKILL);
    if (total <= limit) SAFE("row05", "4 processes together", "held %ld MiB (limit %ld MiB)", total / MiB, limit / MiB);
    else UNSAFE("row05", "4 processes together", "held %ld MiB at once with a sandbox limit of %ld MiB", total / MiB,
                limit / MiB);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  return probe_exit();
}
