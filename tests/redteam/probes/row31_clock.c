/* REDTEAM row 31: clock_settime / settimeofday (and adjtimex, clock_adjtime).
 * Safe outcome: EPERM. The values are the current time / a zero offset, so even a call
 * that got through would not move the host clock noticeably. */
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>

#include "probe.h"

int main(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  EXPECT_FAIL("row31", "clock_settime(REALTIME, now)", clock_settime(CLOCK_REALTIME, &now), EPERM);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  EXPECT_FAIL("row31", "settimeofday(now)", settimeofday(&tv, NULL), EPERM);
  struct timex tx = {0};
  tx.modes = ADJ_SETOFFSET | ADJ_NANO; /* add a zero offset */
  EXPECT_FAIL("row31", "adjtimex(ADJ_SETOFFSET 0)", adjtimex(&tx), EPERM);
  struct timex tx2 = {0};
  tx2.modes = ADJ_SETOFFSET | ADJ_NANO;
  EXPECT_FAIL("row31", "clock_adjtime(REALTIME, ADJ_SETOFFSET 0)", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx2), EPERM);
  return probe_exit();
}
