/* REDTEAM row 5: allocate 10 GiB.
 * argv[1] = mode, argv[2] = the policy's memory_bytes.
 *   private   : malloc 10 GiB at once and touch it; then 16 MiB chunks (touched).
 *   shared    : MAP_SHARED|MAP_ANONYMOUS chunks (touched) - not counted by RLIMIT_DATA.
 *   memfd     : memfd_create + write, each file under RLIMIT_FSIZE.
 *   multiproc : 4 processes each hold 0.75x the limit (3x in total).
 * Safe for every mode: the sandbox never holds more than memory_bytes. Either the
 * allocation fails (rlimits: ENOMEM, this probe prints SAFE and exits 0) or the sandbox is
 * killed on the way (cgroup: status oom, no UNSAFE line printed). Attempts stop at 4x the
 * limit, so a missing limit is reported, never used against the host. */
#include <signal.h>
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
    if (!big) {
      SAFE("row05", "malloc(10 GiB)", "NULL (%s)", strerror(errno));
    } else {
      /* Overcommit hands out the address space; what counts is touching it. */
      printf("NOTE row05 malloc(10 GiB) returned a pointer; touching it\n");
      fflush(stdout);
      long touched = 0;
      while (touched < 4 * limit) {
        touch(big + touched, chunk);
        touched += chunk;
      }
      UNSAFE("row05", "malloc(10 GiB)", "touched %ld MiB with a limit of %ld MiB", touched / MiB, limit / MiB);
      free(big);
    }
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
    /* Each memfd stays under RLIMIT_FSIZE (SIGXFSZ ignored, EFBIG moves on to the next). */
    signal(SIGXFSZ, SIG_IGN);
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
      long in_file = 0;
      while (total <= limit + chunk && total < 4 * limit) {
        if (write(fd, buf, MiB) != MiB) {
          if (errno == EFBIG && in_file > 0) break; /* file full: next memfd */
          err = errno ? errno : ENOSPC;
          break;
        }
        total += MiB;
        in_file += MiB;
      }
      /* keep fd open: the pages stay allocated */
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
