/* REDTEAM row 33: SysV IPC / POSIX mqueue shared with the host.
 * argv[1..3] = SysV keys of a shm segment, message queue and semaphore set the test made on
 * the host; argv[4] = name of a POSIX message queue the test made on the host;
 * argv[5] = a SysV key and argv[6] = an mqueue name this probe creates (the test checks the
 * host cannot see them). Safe outcome: the host's objects are absent here (ENOENT). */
#include <fcntl.h>
#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#include "probe.h"

int main(int argc, char **argv) {
  if (argc < 7) return 2;
  key_t shm = (key_t)strtol(argv[1], NULL, 0), msg = (key_t)strtol(argv[2], NULL, 0), sem = (key_t)strtol(argv[3], NULL, 0);
  EXPECT_FAIL("row33", "shmget(host key)", shmget(shm, 0, 0), ENOENT);
  EXPECT_FAIL("row33", "msgget(host key)", msgget(msg, 0), ENOENT);
  EXPECT_FAIL("row33", "semget(host key)", semget(sem, 0, 0), ENOENT);
  EXPECT_FAIL("row33", "mq_open(host queue)", mq_open(argv[4], O_RDONLY), ENOENT);
  /* Objects made here must stay here. */
  key_t own = (key_t)strtol(argv[5], NULL, 0);
  int id = shmget(own, 4096, IPC_CREAT | 0666);
  if (id >= 0) NOTE("row33", "created shm key %s", argv[5]);
  else UNSAFE("row33", "shmget(own key, IPC_CREAT)", "failed: %s (nothing tested)", strerror(errno));
  struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 16};
  mqd_t q = mq_open(argv[6], O_CREAT | O_RDWR, 0666, &a);
  if (q != (mqd_t)-1) NOTE("row33", "created mqueue %s", argv[6]);
  else UNSAFE("row33", "mq_open(own, O_CREAT)", "failed: %s (nothing tested)", strerror(errno));
  /* The sandbox's view of SysV objects holds only its own. */
  FILE *f = fopen("/proc/sysvipc/shm", "r");
  char line[512];
  int others = 0, rows = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (rows++ == 0) continue; /* header */
    long key = strtol(line, NULL, 10);
    if ((key_t)key != own) others++;
  }
  if (f) fclose(f);
  if (others) UNSAFE("row33", "/proc/sysvipc/shm", "%d segments that are not ours", others);
  else SAFE("row33", "/proc/sysvipc/shm", "only our own segment");
  return probe_exit();
}
