/* REDTEAM row 27 (x32 half): dodge the filter through the x32 ABI (__X32_SYSCALL_BIT).
 * Safe outcome: killed at the syscall; the exec reports status seccomp_violation and the
 * message names "x32:getpid". Reaching the UNSAFE line means the call returned (even
 * ENOSYS would mean the filter let it through to the kernel's dispatcher). */
#include <sys/syscall.h>

#include "probe.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

int main(void) {
  printf("NOTE row27 about to issue x32 getpid\n");
  fflush(stdout);
  long r = syscall(__X32_SYSCALL_BIT | __NR_getpid);
  UNSAFE("row27", "x32 getpid", "returned %ld (errno %s): the x32 ABI is not killed", r, strerror(errno));
  return probe_exit();
}
