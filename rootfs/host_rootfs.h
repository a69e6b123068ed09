// Host-mode rootfs: the default lower layer, so a fresh machine needs no image.
//
// A small skeleton directory is built once (atomically, under a versioned name) and used
// as the overlay's lower layer: the top-level directories, the host's merged-/usr symlinks
// (bin -> usr/bin ...), and a curated /etc — generated passwd/group/hosts/nsswitch plus
// copies of what programs need to run (ld.so cache, alternatives, ssl certs, language
// config dirs). Nothing else of the host's /etc (shadow, ssh keys, machine-id) is there.
// The host's /usr (and any real /lib* dirs) are bound read-only on top at launch.
#pragma once

#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral::rootfs {

struct HostRootfs {
  std::string lower_dir;                // the skeleton, used as overlay lowerdir
  std::vector<std::string> ro_binds;    // absolute host dirs bound read-only at the same path
};

// Returns the skeleton under `rootfs_dir` (e.g. /var/lib/corral/rootfs), building it first
// if it is missing. Safe against concurrent callers (build in a temp dir, then rename).
StatusOr<HostRootfs> ensure_host_rootfs(const std::string& rootfs_dir);

}  // namespace corral::rootfs
