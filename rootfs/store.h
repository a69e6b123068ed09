// The rootfs store: named root filesystems a sandbox can use as its overlay's lower layers.
//
//   "host"          the curated host view (host_rootfs.h), always available
//   anything else   a directory <rootfs_dir>/<name>/ holding rootfs.json:
//                     {"name": "...", "source": "oci:IMAGE" | "debootstrap:LANG" | ...,
//                      "layers": ["/abs/layer/top", ..., "/abs/layer/bottom"],
//                      "env": ["K=V", ...], "workdir": "/path", "created": "ISO-8601"}
//                   Layers are read-only directories stacked top first (overlay lowerdir
//                   order), so rootfs that share a base (debootstrap base + language
//                   packages) store it once.
// Registration writes rootfs.json last (temp file + rename): a half-written rootfs is never
// visible under its name.
#pragma once

#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral::rootfs {

struct Rootfs {
  std::string name;
  std::string source;
  std::vector<std::string> layers;    // overlay lower dirs, top first
  std::vector<std::string> ro_binds;  // host dirs bound read-only at the same path (host mode)
  std::vector<std::string> env;       // image config Env ("K=V"), applied before the policy's
  std::string workdir;                // image config WorkingDir; empty: the policy's
};

// Valid names: 1-64 of [a-z0-9._-], not starting with '.' or '-'; "host" is reserved.
Status check_rootfs_name(const std::string& name);

// Resolves a policy's "rootfs" value.
StatusOr<Rootfs> resolve_rootfs(const std::string& name, const std::string& rootfs_dir);

// Writes <rootfs_dir>/<r.name>/rootfs.json atomically. Every layer must be an absolute
// existing directory.
Status register_rootfs(const Rootfs& r, const std::string& rootfs_dir);

// Every registered rootfs (not "host"), sorted by name; unreadable entries are skipped.
std::vector<Rootfs> list_rootfs(const std::string& rootfs_dir);

}  // namespace corral::rootfs
