// File descriptors: nothing from the supervisor may reach a sandbox except what an exec
// request passes explicitly (its stdio). corral-init closes every inherited fd but its
// control socket the moment it starts, and each worker closes everything above its stdio and
// report socket before execve (CVE-2024-21626 was a leaked host fd).
#pragma once

namespace corral::runtime {

// Closes every fd >= `lowfd`. No allocation.
int close_fds_from(int lowfd);

}  // namespace corral::runtime
