/* REDTEAM row 36: personality(ADDR_NO_RANDOMIZE / READ_IMPLIES_EXEC).
 * Safe outcome: EPERM for the flags that weaken ASLR or NX; the plain query still works. */
#include <sys/personality.h>

#include "probe.h"

int main(void) {
  EXPECT_FAIL("row36", "personality(ADDR_NO_RANDOMIZE)", personality(PER_LINUX | ADDR_NO_RANDOMIZE), EPERM);
  EXPECT_FAIL("row36", "personality(READ_IMPLIES_EXEC)", personality(PER_LINUX | READ_IMPLIES_EXEC), EPERM);
  EXPECT_FAIL("row36", "personality(ADDR_COMPAT_LAYOUT)", personality(PER_LINUX | ADDR_COMPAT_LAYOUT), EPERM);
  EXPECT_FAIL("row36", "personality(MMAP_PAGE_ZERO)", personality(PER_LINUX | MMAP_PAGE_ZERO), EPERM);
  EXPECT_FAIL("row36", "personality(PER_SVR4)", personality(PER_SVR4), EPERM);
  int cur = personality(0xffffffff);
  if (cur >= 0 && !(cur & (ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC)))
    SAFE("row36", "current personality", "%#x (no ASLR/NX weakening)", cur);
  else UNSAFE("row36", "current personality", "%#x", cur);
  return probe_exit();
}
