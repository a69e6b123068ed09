#include "runtime/netns.h"

#include "src/core/unique_fd.h"

#include <fcntl.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

namespace corral::runtime {
namespace {

Status set_lo_up() {
  std::unique_ptr<nl_sock, decltype(&nl_socket_free)> sock(nl_socket_alloc(), nl_socket_free);
  if (!sock) return Internal("libnl: cannot allocate a netlink socket");
  int err = nl_connect(sock.get(), NETLINK_ROUTE);
  if (err < 0) return Internal(std::string("libnl: connect: ") + nl_geterror(err));
  // lo is always ifindex 1 in a fresh namespace: address it directly instead of asking the
  // kernel for it first (saves a netlink round trip per sandbox).
  std::unique_ptr<rtnl_link, decltype(&rtnl_link_put)> lo(rtnl_link_alloc(), rtnl_link_put);
  std::unique_ptr<rtnl_link, decltype(&rtnl_link_put)> change(rtnl_link_alloc(), rtnl_link_put);
  if (!lo || !change) return Internal("libnl: cannot allocate a link");
  rtnl_link_set_ifindex(lo.get(), 1);
  rtnl_link_set_flags(change.get(), IFF_UP);
  err = rtnl_link_change(sock.get(), lo.get(), change.get(), 0);
  if (err < 0) return Internal(std::string("libnl: set lo up: ") + nl_geterror(err));
  return Status::Ok();
}

}  // namespace

Status bring_up_loopback(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/net", pid);
  UniqueFd target(open(path, O_RDONLY | O_CLOEXEC));
  if (!target.ok()) return SysError("open sandbox netns", path);
  UniqueFd own(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!own.ok()) return SysError("open own netns", "/proc/thread-self/ns/net");
  if (setns(target.get(), CLONE_NEWNET) != 0) return SysError("enter sandbox netns", path);
  Status s = set_lo_up();
  if (setns(own.get(), CLONE_NEWNET) != 0) {
    // Staying in the sandbox's namespace would silently cut this thread off the network.
    return SysError("return to own netns", "/proc/thread-self/ns/net");
  }
  return s;
}

PreparedNetns::PreparedNetns(bool loopback) {
  thread_ = std::thread([this, loopback] {
    // Network namespaces are per-thread: this one enters the new namespace and ends in it.
    if (unshare(CLONE_NEWNET) != 0) {
      status_ = SysError("create network namespace");
      return;
    }
    fd_.reset(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!fd_.ok()) {
      status_ = SysError("open new netns", "/proc/thread-self/ns/net");
      return;
    }
    if (loopback) status_ = set_lo_up();
  });
}

PreparedNetns::~PreparedNetns() {
  if (thread_.joinable()) thread_.join();
}

StatusOr<UniqueFd> PreparedNetns::take() {
  if (thread_.joinable()) thread_.join();
  if (!status_.ok()) return status_;
  return std::move(fd_);
}

}  // namespace corral::runtime
