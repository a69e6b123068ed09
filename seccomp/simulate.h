// A compiled filter run in user space on one syscall, the way the kernel would run it: lets tests
// and `corral doctor` ask "what happens to socket(AF_PACKET, ...)?" without loading anything.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral::seccomp {

// The filter's SECCOMP_RET_* value for `data`; an error for a malformed program (a jump or a
// load out of range, an instruction seccomp does not accept).
StatusOr<uint32_t> simulate(const std::vector<struct sock_filter>& filter, const struct seccomp_data& data);

// "allow", "errno:1", "notify", "kill_process", "trap", "trace", "log", ...
std::string describe_return(uint32_t ret);

}  // namespace corral::seccomp
