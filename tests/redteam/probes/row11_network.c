/* REDTEAM row 11: connect to an internet or LAN address.
 * argv[1..] = the host's own non-loopback addresses (the test passes them), tried as well.
 * Safe outcome: every connect / sendto fails with ENETUNREACH (no route: only lo exists in
 * the sandbox's network namespace; EADDRNOTAVAIL for IPv6 when even lo is down) and
 * getifaddrs lists nothing but lo. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "probe.h"

static void try_connect(const char *addr, int port, int type) {
  struct sockaddr_storage ss = {0};
  socklen_t len;
  int family;
  if (strchr(addr, ':')) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1) return;
    family = AF_INET6;
    len = sizeof *s6;
  } else {
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(port);
    if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1) return;
    family = AF_INET;
    len = sizeof *s4;
  }
  char what[128];
  snprintf(what, sizeof what, "%s %s port %d", type == SOCK_STREAM ? "connect tcp" : "sendto udp", addr, port);
  int fd = socket(family, type | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    UNSAFE("row11", what, "socket() itself failed: %s (cannot tell)", strerror(errno));
    return;
  }
  if (type == SOCK_DGRAM) {
    EXPECT_FAIL("row11", what, sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len), ENETUNREACH, EADDRNOTAVAIL);
    close(fd);
    return;
  }
  int r = connect(fd, (struct sockaddr *)&ss, len);
  int e = errno;
  if (r != 0 && e == EINPROGRESS) {
    /* a route exists: that alone breaks isolation, whether or not anyone answers */
    struct pollfd p = {fd, POLLOUT, 0};
    poll(&p, 1, 2000);
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    UNSAFE("row11", what, "connect in progress (a route exists), then: %s", soerr ? strerror(soerr) : "connected");
  } else {
    /* IPv6 with no interface up (network "none") has no source address: EADDRNOTAVAIL. */
    static const int ok[] = {ENETUNREACH, EADDRNOTAVAIL, 0};
    expect_fail_list("row11", what, r, e, ok);
  }
  close(fd);
}

int main(int argc, char **argv) {
  try_connect("1.1.1.1", 80, SOCK_STREAM);
  try_connect("8.8.8.8", 53, SOCK_STREAM);
  try_connect("8.8.8.8", 53, SOCK_DGRAM);
  try_connect("10.0.0.1", 22, SOCK_STREAM);
  try_connect("172.17.0.1", 2375, SOCK_STREAM);
  try_connect("192.168.1.1", 80, SOCK_STREAM);
  try_connect("169.254.169.254", 80, SOCK_STREAM);
  try_connect("2606:4700:4700::1111", 443, SOCK_STREAM);
  for (int i = 1; i < argc; ++i) {
    try_connect(argv[i], 22, SOCK_STREAM);
    try_connect(argv[i], 53, SOCK_DGRAM);
  }
  struct ifaddrs *ifs = NULL;
  if (getifaddrs(&ifs) != 0) {
    UNSAFE("row11", "getifaddrs", "failed: %s (cannot tell)", strerror(errno));
  } else {
    char others[256] = "";
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
      if (strcmp(i->ifa_name, "lo") && !strstr(others, i->ifa_name)) {
        strncat(others, i->ifa_name, sizeof others - strlen(others) - 2);
        strcat(others, " ");
      }
    }
    freeifaddrs(ifs);
    if (others[0]) UNSAFE("row11", "interfaces", "besides lo: %s", others);
    else SAFE("row11", "interfaces", "only lo");
  }
  return probe_exit();
}
