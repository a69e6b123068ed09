// Network namespace, supervisor side. The sandbox gets a fresh network namespace with no
// route out; with the loopback policy its `lo` is brought up (over rtnetlink, with libnl)
// so code that talks to itself on 127.0.0.1 works while nothing else is reachable.
#pragma once

#include <sys/types.h>

#include <memory>
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

}  // namespace corral::runtime
