/* REDTEAM row 19: unshare(CLONE_NEWUSER) / clone with namespace flags to regain caps.
 * Safe outcome: unshare and clone with any CLONE_NEW* flag fail with EPERM; clone3 (whose
 * flags seccomp cannot inspect) fails with ENOSYS. A call that unexpectedly creates a
 * child makes the child exit at once. */
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe.h"

static long raw_clone(unsigned long flags) {
  long r = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (r == 0) _exit(0);
  if (r > 0) waitpid((pid_t)r, NULL, 0);
  return r;
}

static long raw_clone3(uint64_t flags) {
  struct clone_args a = {0};
  a.flags = flags;
  a.exit_signal = SIGCHLD;
  long r = syscall(SYS_clone3, &a, sizeof a);
  if (r == 0) _exit(0);
  if (r > 0) waitpid((pid_t)r, NULL, 0);
  return r;
}

int main(void) {
  static const struct {
    const char *name;
    unsigned long flag;
  } ns[] = {{"CLONE_NEWUSER", CLONE_NEWUSER}, {"CLONE_NEWNS", CLONE_NEWNS},   {"CLONE_NEWPID", CLONE_NEWPID},
            {"CLONE_NEWNET", CLONE_NEWNET},   {"CLONE_NEWUTS", CLONE_NEWUTS}, {"CLONE_NEWIPC", CLONE_NEWIPC},
            {"CLONE_NEWCGROUP", CLONE_NEWCGROUP}, {"CLONE_NEWTIME", 0x80}};
  char what[96];
  for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i) {
    snprintf(what, sizeof what, "unshare(%s)", ns[i].name);
    EXPECT_FAIL("row19", what, unshare((int)ns[i].flag), EPERM);
    if (ns[i].flag != 0x80) { /* CLONE_NEWTIME overlaps CSIGNAL in clone() */
      snprintf(what, sizeof what, "clone(%s)", ns[i].name);
      EXPECT_FAIL("row19", what, raw_clone(ns[i].flag), EPERM);
    }
    snprintf(what, sizeof what, "clone3(%s)", ns[i].name);
    EXPECT_FAIL("row19", what, raw_clone3(ns[i].flag), ENOSYS, EPERM);
  }
  EXPECT_FAIL("row19", "unshare(CLONE_NEWUSER|CLONE_NEWNS)", unshare(CLONE_NEWUSER | CLONE_NEWNS), EPERM);
  EXPECT_FAIL("row19", "clone3(0) (plain fork via clone3)", raw_clone3(0), ENOSYS, EPERM);
  return probe_exit();
}
