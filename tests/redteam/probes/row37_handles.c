/* REDTEAM row 37: open_by_handle_at ("Shocker").
 * Shocker brute-forced a file handle for the host's root inode and opened it with
 * CAP_DAC_READ_SEARCH. Safe outcome: name_to_handle_at and open_by_handle_at fail with
 * EPERM (seccomp), whatever the handle. */
#include <fcntl.h>
#include <stdint.h>

#include "probe.h"

int main(void) {
  struct {
    struct file_handle fh;
    unsigned char bytes[128];
  } h = {0};
  h.fh.handle_bytes = 128;
  int mount_id;
  EXPECT_FAIL("row37", "name_to_handle_at(/etc/passwd)", name_to_handle_at(AT_FDCWD, "/etc/passwd", &h.fh, &mount_id, 0),
              EPERM);
  /* The Shocker handle: ext4 root inode 2, generation 0. */
  h.fh.handle_bytes = 8;
  h.fh.handle_type = 1; /* FILEID_INO32_GEN */
  uint32_t ino_gen[2] = {2, 0};
  memcpy(h.fh.f_handle, ino_gen, sizeof ino_gen);
  int usr = open("/usr", O_RDONLY | O_DIRECTORY);
  EXPECT_FAIL("row37", "open_by_handle_at(/usr mount, root inode)", open_by_handle_at(usr, &h.fh, O_RDONLY), EPERM);
  EXPECT_FAIL("row37", "open_by_handle_at(cwd, root inode)", open_by_handle_at(AT_FDCWD, &h.fh, O_RDONLY), EPERM);
  return probe_exit();
}
