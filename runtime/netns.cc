#include "runtime/netns.h"

#include "src/core/unique_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

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

bool is_host_owned_netns(int fd) {
  if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) return false;
  UniqueFd owner(ioctl(fd, NS_GET_USERNS));
  struct stat a, b;
  return owner.ok() && fstat(owner.get(), &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

namespace {

const char* flavor(bool loopback) { return loopback ? "lo" : "none"; }

std::string slot_dir(const std::string& dir, bool loopback, int slot) {
  return dir + "/" + flavor(loopback) + "-" + std::to_string(slot);
}

// Directory entries of `dir` whose names start with `prefix`.
std::vector<std::string> entries(const std::string& dir, const char* prefix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  const size_t n = strlen(prefix);
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, prefix, n) == 0) out.push_back(e->d_name);
  }
  closedir(d);
  return out;
}

// Whether `path` is a mount point of this mount namespace.
bool is_mount_point(const std::string& path) {
  FILE* f = fopen("/proc/self/mountinfo", "re");
  if (!f) return false;
  char* line = nullptr;
  size_t cap = 0;
  bool found = false;
  while (!found && getline(&line, &cap, f) > 0) {
    char point[4096];
    if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1) found = path == point;
  }
  free(line);
  fclose(f);
  return found;
}

}  // namespace

std::optional<NetnsStash::Taken> NetnsStash::take(bool loopback) {
  static std::atomic<unsigned> counter{0};
  for (int slot = 0; slot < kSlots; ++slot) {
    const std::string from = slot_dir(dir_, loopback, slot);
    const std::string to = dir_ + "/.claimed-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno == ENOENT && slot == 0 && access(dir_.c_str(), F_OK) != 0) return std::nullopt;
      continue;
    }
    Taken t{UniqueFd(open((to + "/ns").c_str(), O_RDONLY | O_CLOEXEC)), to};
    if (t.fd.ok() && is_host_owned_netns(t.fd.get())) return t;
    release(to);  // not what fill() makes: nothing uses it
  }
  return std::nullopt;
}

void NetnsStash::release(const std::string& claimed) {
  const std::string ns = claimed + "/ns";
  umount2(ns.c_str(), MNT_DETACH);
  unlink(ns.c_str());
  rmdir(claimed.c_str());
}

Status NetnsStash::fill(bool loopback, int want) {
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return SysError("create netns stash", dir_);
  UniqueFd lock(open((dir_ + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock.ok()) return SysError("open netns stash lock", dir_ + "/.lock");
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) return Status::Ok();  // another process fills it
  // The pins are copied into every mount namespace made while they exist (each sandbox's
  // until it detaches the host's tree, anything else on the host for its lifetime). On a
  // shared mount those copies are peers, so unpinning here unpins them too; the directory
  // is made a shared mount of its own for that.
  if (!is_mount_point(dir_)) {
    if (mount(dir_.c_str(), dir_.c_str(), nullptr, MS_BIND, nullptr) != 0) return SysError("bind netns stash", dir_);
  }
  if (mount(nullptr, dir_.c_str(), nullptr, MS_SHARED, nullptr) != 0) return SysError("share netns stash", dir_);
  // Claims (and half-made entries) of processes that are gone.
  for (const char* prefix : {".claimed-", ".new-"}) {
    for (const std::string& name : entries(dir_, prefix)) {
      unsigned pid = 0;
      if (sscanf(name.c_str() + strlen(prefix), "%u", &pid) != 1) continue;
      if (pid != static_cast<unsigned>(getpid()) && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        release(dir_ + "/" + name);
      }
    }
  }
  if (want > kSlots) want = kSlots;
  for (int slot = 0; slot < want; ++slot) {
    const std::string target = slot_dir(dir_, loopback, slot);
    if (access(target.c_str(), F_OK) == 0) continue;
    const std::string fresh = dir_ + "/.new-" + std::to_string(getpid()) + "-" + std::to_string(slot);
    if (mkdir(fresh.c_str(), 0700) != 0) return SysError("create netns stash entry", fresh);
    const std::string ns = fresh + "/ns";
    UniqueFd file(open(ns.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400));
    if (!file.ok()) {
      Status s = SysError("create netns stash entry", ns);
      release(fresh);
      return s;
    }
    file.reset();
    PreparedNetns made(loopback);
    auto fd = made.take();
    if (!fd.ok()) {
      release(fresh);
      return fd.status();
    }
    const std::string source = "/proc/self/fd/" + std::to_string(fd->get());
    if (mount(source.c_str(), ns.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      Status s = SysError("pin network namespace", ns);
      release(fresh);
      return s;
    }
    if (renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
      Status s = SysError("stash network namespace", target);
      release(fresh);
      return s;
    }
  }
  return Status::Ok();
}

int NetnsStash::clear() {
  int removed = 0;
  for (const std::string& name : entries(dir_, "")) {
    if (name == "." || name == ".." || name == ".lock") continue;
    release(dir_ + "/" + name);
    ++removed;
  }
  if (is_mount_point(dir_)) umount2(dir_.c_str(), MNT_DETACH);
  return removed;
}

}  // namespace corral::runtime
