// Network namespace, supervisor side. The sandbox gets a fresh network namespace with no
// route out; with the loopback policy its `lo` is brought up (over rtnetlink, with libnl)
// so code that talks to itself on 127.0.0.1 works while nothing else is reachable.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "src/core/status.h"
#include "src/core/unique_fd.h"

namespace corral::runtime {

// Brings `lo` up inside the network namespace of `pid`. Enters that namespace on the
// calling thread only (network namespaces are per-thread) and always returns to its own.
Status bring_up_loopback(pid_t pid);

// A fresh network namespace made on a helper thread while the caller prepares the rest of
// a sandbox: creating one is most of what clone3 with every namespace costs (~0.45 of
// ~0.6 ms here), and this takes it off the path. The caller clones corral-init into it (see
// clone_init). It belongs to the host's user namespace, not the sandbox's: nothing in the
// sandbox holds any capability over it (its interfaces, routes and sysctls stay as made).
class PreparedNetns {
 public:
  // Starts making it; with `loopback`, lo is brought up in it too.
  explicit PreparedNetns(bool loopback);
  ~PreparedNetns();
  PreparedNetns(const PreparedNetns&) = delete;
  PreparedNetns& operator=(const PreparedNetns&) = delete;
  // Waits for it: an fd of the namespace, or what failed.
  StatusOr<UniqueFd> take();

 private:
  std::thread thread_;
  Status status_;
  UniqueFd fd_;
};

// Network namespaces made ahead of time and kept between processes, for supervisors that
// live for one sandbox or two (the CLI): such a process exits before a namespace made on
// its behalf in the background could pay off, so the process that tears a sandbox down
// makes one for the next, and the next `corral exec` takes it instead of waiting for
// unshare(CLONE_NEWNET) (0.6-1 ms here).
//
// Each namespace is pinned by a bind mount of its nsfs file at <dir>/<flavor>-<slot>/ns,
// flavor "lo" (loopback up) or "none". Why this is safe:
//  - A stashed namespace is fresh: made by fill(), entered by no process, owned by the
//    host's user namespace like PreparedNetns's (nothing in a sandbox has any capability
//    over it). The directory is root's alone (0700).
//  - A taker claims one by renaming its slot directory (atomic: no two takers get the same
//    namespace, and none gets one twice), then checks it is a network namespace of the
//    host's user namespace before using it.
//  - The pin is released (umount, unlink) when the sandbox is destroyed; claims whose
//    process died are released by the next fill(). At most kSlots namespaces per flavor
//    wait; clear() (`corral doctor --cleanup`) removes them all.
class NetnsStash {
 public:
  static constexpr int kSlots = 2;
  explicit NetnsStash(std::string dir) : dir_(std::move(dir)) {}

  struct Taken {
    UniqueFd fd;          // the namespace
    std::string claimed;  // its claimed directory, for release()
  };
  // A stashed namespace of this flavor, claimed; nullopt when none waits (or the one found
  // is not a network namespace of the host's user namespace: it is left alone).
  std::optional<Taken> take(bool loopback);
  // Unpins a claimed namespace (its users keep it alive). Errors are ignored: a claim
  // already released is fine.
  static void release(const std::string& claimed);
  // Makes namespaces until `want` (at most kSlots) of this flavor wait, and releases the
  // claims of processes that died. Does nothing while another process fills.
  Status fill(bool loopback, int want);
  // Removes every stashed namespace and every claim; returns how many.
  int clear();

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// Whether `fd` is a network namespace owned by this process's user namespace.
bool is_host_owned_netns(int fd);

}  // namespace corral::runtime
