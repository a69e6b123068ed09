/* REDTEAM row 25: keyctl / add_key / request_key.
 * Keyrings are not namespaced, so a sandbox must not touch them. Safe outcome: EPERM. */
#include <linux/keyctl.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  EXPECT_FAIL("row25", "add_key(user, session keyring)",
              syscall(SYS_add_key, "user", "corral-row25", "secret", 6, KEY_SPEC_SESSION_KEYRING), EPERM);
  EXPECT_FAIL("row25", "add_key(keyring)", syscall(SYS_add_key, "keyring", "corral-row25", NULL, 0, KEY_SPEC_USER_KEYRING),
              EPERM);
  EXPECT_FAIL("row25", "request_key", syscall(SYS_request_key, "user", "corral-row25", NULL, KEY_SPEC_SESSION_KEYRING),
              EPERM);
  EXPECT_FAIL("row25", "keyctl(GET_KEYRING_ID, user)", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0),
              EPERM);
  EXPECT_FAIL("row25", "keyctl(JOIN_SESSION_KEYRING)", syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "corral-row25"),
              EPERM);
  EXPECT_FAIL("row25", "keyctl(READ, session)", ({ char b[64]; syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, b, sizeof b); }),
              EPERM);
  return probe_exit();
}
