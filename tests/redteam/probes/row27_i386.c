/* REDTEAM row 27 (i386 half): dodge the filter through the i386 ABI (int $0x80).
 * i386 syscall 20 is getpid (on x86_64, 20 is writev), so a report naming "getpid" proves
 * the supervisor decoded the foreign ABI. Safe outcome: this process is killed at the
 * int $0x80 and the exec reports status seccomp_violation naming the syscall; reaching the
 * UNSAFE line means the foreign-ABI call returned. */
#include "probe.h"

int main(void) {
  printf("NOTE row27 about to issue int $0x80 (i386 getpid)\n");
  fflush(stdout);
  long ret = 20; /* __NR_getpid on i386 */
  __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
  UNSAFE("row27", "int $0x80 getpid", "returned %ld: the i386 ABI is not killed", ret);
  return probe_exit();
}
