/* REDTEAM row 12: reach a host service on 127.0.0.1 or an abstract unix socket.
 * argv[1] = TCP port the test listens on at the host's 127.0.0.1 (and ::1 if it can),
 * argv[2] = abstract unix socket name the test listens on (without the leading NUL),
 * argv[3] = host filesystem path of a unix socket the test listens on.
 * Safe outcome: refused (ECONNREFUSED: the sandbox's own lo has no listener; abstract
 * sockets belong to the network namespace), unreachable when the policy keeps even lo down
 * (network "none"), or, for the path, absent (ENOENT). */
#include <arpa/inet.h>
#include <stddef.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "probe.h"

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  int port = atoi(argv[1]);
  struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_FAIL("row12", "connect 127.0.0.1 (host listener)", connect(fd, (struct sockaddr *)&s4, sizeof s4), ECONNREFUSED,
              ENETUNREACH);
  close(fd);

  struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
  inet_pton(AF_INET6, "::1", &s6.sin6_addr);
  fd = socket(AF_INET6, SOCK_STREAM, 0);
  EXPECT_FAIL("row12", "connect [::1] (host listener)", connect(fd, (struct sockaddr *)&s6, sizeof s6), ECONNREFUSED,
              EADDRNOTAVAIL, ENETUNREACH);
  close(fd);

  struct sockaddr_un un = {.sun_family = AF_UNIX};
  size_t n = strlen(argv[2]);
  if (n > sizeof un.sun_path - 2) n = sizeof un.sun_path - 2;
  memcpy(un.sun_path + 1, argv[2], n);
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  EXPECT_FAIL("row12", "connect abstract @socket (host listener)",
              connect(fd, (struct sockaddr *)&un, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)),
              ECONNREFUSED);
  close(fd);

  struct sockaddr_un path = {.sun_family = AF_UNIX};
  snprintf(path.sun_path, sizeof path.sun_path, "%s", argv[3]);
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  EXPECT_FAIL("row12", "connect host unix socket path", connect(fd, (struct sockaddr *)&path, sizeof path), ENOENT);
  close(fd);
  return probe_exit();
}
