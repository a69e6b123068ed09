/* REDTEAM row 38: raw socket, AF_PACKET, AF_VSOCK, AF_ALG (and other exotic families).
 * Safe outcome: EPERM for each (no CAP_NET_RAW; seccomp allows only unix, inet/inet6
 * stream/dgram/seqpacket and NETLINK_ROUTE). Plain TCP and NETLINK_ROUTE still work. */
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "probe.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

int main(void) {
  static const struct {
    const char *name;
    int family, type, proto;
  } cases[] = {
      {"AF_INET SOCK_RAW ICMP", AF_INET, SOCK_RAW, IPPROTO_ICMP},
      {"AF_INET SOCK_RAW|SOCK_CLOEXEC", AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW},
      {"AF_INET6 SOCK_RAW", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6},
      {"AF_INET SOCK_PACKET", AF_INET, SOCK_PACKET, 0x0300},
      {"AF_PACKET SOCK_RAW", AF_PACKET, SOCK_RAW, 0x0300},
      {"AF_PACKET SOCK_DGRAM", AF_PACKET, SOCK_DGRAM, 0x0300},
      {"AF_VSOCK SOCK_STREAM", AF_VSOCK, SOCK_STREAM, 0},
      {"AF_ALG SOCK_SEQPACKET", AF_ALG, SOCK_SEQPACKET, 0},
      {"AF_NETLINK NETLINK_AUDIT", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
      {"AF_NETLINK NETLINK_KOBJECT_UEVENT", AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT},
      {"AF_NETLINK NETLINK_NETFILTER", AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER},
      {"AF_NETLINK NETLINK_SOCK_DIAG", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG},
      {"AF_KEY", AF_KEY, SOCK_RAW, 2},
      {"AF_XDP", AF_XDP, SOCK_RAW, 0},
      {"AF_BLUETOOTH", AF_BLUETOOTH, SOCK_RAW, 0},
      {"AF_CAN", AF_CAN, SOCK_RAW, 1},
      {"AF_TIPC", AF_TIPC, SOCK_RDM, 0},
      {"AF_RDS", AF_RDS, SOCK_SEQPACKET, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    int fd = socket(cases[i].family, cases[i].type, cases[i].proto);
    int e = errno;
    static const int ok[] = {EPERM, 0};
    expect_fail_list("row38", cases[i].name, fd, e, ok);
    if (fd >= 0) close(fd);
  }
  int tcp = socket(AF_INET, SOCK_STREAM, 0);
  int rt = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
  NOTE("row38", "sanity: AF_INET stream %s, NETLINK_ROUTE %s", tcp >= 0 ? "works" : "fails", rt >= 0 ? "works" : "fails");
  return probe_exit();
}
