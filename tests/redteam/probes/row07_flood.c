/* REDTEAM row 7: flood stdout (or stderr) with 10 GiB.
 * argv[1] = "stdout" | "stderr". Safe outcome (checked by the test): the capture is
 * truncated at output_bytes, the status is output_limit, and the supervisor's memory stays
 * bounded. If all 10 GiB get through, this prints UNSAFE on the other stream and exits 1. */
#include "probe.h"

int main(int argc, char **argv) {
  int fd = (argc > 1 && !strcmp(argv[1], "stderr")) ? 2 : 1;
  static char buf[1 << 16];
  memset(buf, 'A', sizeof buf);
  for (long i = 0; i < (10L << 30) / (long)sizeof buf; ++i) {
    if (write(fd, buf, sizeof buf) < 0) {
      dprintf(3 - fd, "SAFE row07 flood: write failed: %s\n", strerror(errno));
      return 0;
    }
  }
  dprintf(3 - fd, "UNSAFE row07 flood: wrote 10 GiB without being stopped\n");
  return 1;
}
