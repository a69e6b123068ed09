// Mount namespace, child side: builds the sandbox's root filesystem and pivots into it.
//
//   / made private (nothing propagates back to the host)
//   staging tmpfs (size = disk_bytes): overlay upper + work, /tmp, /dev/shm
//   overlay root: lower = the rootfs (host-mode skeleton or an image), upper = staging
//   read-only binds the rootfs asks for (host mode: /usr and the /lib* dirs)
//   fresh /proc (nosuid,nodev,noexec) with sensitive files masked, /proc/sys read-only
//   minimal /dev: tmpfs + binds of null zero full random urandom tty, devpts newinstance
//   the policy's own mounts
//   pivot_root into the new root and detach the old one (never chroot)
//
// Runs in corral-init before any untrusted code exists; must not allocate.
#pragma once

#include "runtime/launch_plan.h"
#include "runtime/protocol.h"

namespace corral::runtime {

// Returns 0, or -1 with `err` naming the failed step and path.
int build_root_filesystem(const LaunchPlan& plan, ErrorPayload* err);

}  // namespace corral::runtime
