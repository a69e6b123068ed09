/* REDTEAM row 14: ptrace or process_vm_readv the supervisor or another sandbox.
 * argv[1..] = host pids to aim at (the test passes its own pid and another sandbox's init).
 * Safe outcome: EPERM (seccomp denies ptrace and process_vm_* wholesale, even on one's own
 * child) or ESRCH (host pids do not exist in this pid namespace); init's /proc entries that
 * would expose memory or fds are closed (EACCES). */
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "probe.h"

static long vm_read(pid_t pid) {
  char local[16];
  struct iovec l = {local, sizeof local};
  struct iovec r = {(void *)0x400000, sizeof local};
  return process_vm_readv(pid, &l, 1, &r, 1, 0);
}

int main(int argc, char **argv) {
  EXPECT_FAIL("row14", "ptrace(ATTACH, init)", ptrace(PTRACE_ATTACH, 1, 0, 0), EPERM);
  EXPECT_FAIL("row14", "ptrace(SEIZE, init)", ptrace(PTRACE_SEIZE, 1, 0, 0), EPERM);
  EXPECT_FAIL("row14", "process_vm_readv(init)", vm_read(1), EPERM);
  EXPECT_FAIL("row14", "process_vm_writev(init)",
              ({ char b[1] = {0}; struct iovec l = {b, 1}, r = {(void *)0x400000, 1};
                 process_vm_writev(1, &l, 1, &r, 1, 0); }), EPERM);
  EXPECT_FAIL("row14", "open /proc/1/mem", open("/proc/1/mem", O_RDONLY), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row14", "open /proc/1/fd/3 (control socket)", open("/proc/1/fd/3", O_RDWR), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row14", "open /proc/1/root", open("/proc/1/root/", O_RDONLY | O_DIRECTORY), EACCES, EPERM, ENOENT);
  int pfd = (int)syscall(SYS_pidfd_open, 1, 0);
  EXPECT_FAIL("row14", "pidfd_getfd(init, 3)", syscall(SYS_pidfd_getfd, pfd, 3, 0), EPERM, EBADF);
  if (pfd >= 0) close(pfd);

  /* Even our own child cannot be traced: ptrace is off, not just restricted. */
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  EXPECT_FAIL("row14", "ptrace(ATTACH, own child)", ptrace(PTRACE_ATTACH, child, 0, 0), EPERM);
  EXPECT_FAIL("row14", "process_vm_readv(own child)", vm_read(child), EPERM);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);

  for (int i = 1; i < argc; ++i) {
    pid_t p = atoi(argv[i]);
    char what[96];
    snprintf(what, sizeof what, "ptrace(ATTACH, host pid %d)", p);
    EXPECT_FAIL("row14", what, ptrace(PTRACE_ATTACH, p, 0, 0), EPERM, ESRCH);
    snprintf(what, sizeof what, "process_vm_readv(host pid %d)", p);
    EXPECT_FAIL("row14", what, vm_read(p), EPERM, ESRCH);
    snprintf(what, sizeof what, "kill(host pid %d, 0)", p);
    EXPECT_FAIL("row14", what, kill(p, 0), ESRCH);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", p);
    struct stat st;
    snprintf(what, sizeof what, "stat /proc/%d", p);
    EXPECT_FAIL("row14", what, stat(path, &st), ENOENT);
  }
  return probe_exit();
}
