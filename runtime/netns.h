// Network namespace, supervisor side. The sandbox gets a fresh network namespace with no
// route out; with the loopback policy its `lo` is brought up (over rtnetlink, with libnl)
// so code that talks to itself on 127.0.0.1 works while nothing else is reachable.
#pragma once

#include <sys/types.h>

#include "src/core/status.h"

namespace corral::runtime {

// Brings `lo` up inside the network namespace of `pid`. Enters that namespace on the
// calling thread only (network namespaces are per-thread) and always returns to its own.
Status bring_up_loopback(pid_t pid);

}  // namespace corral::runtime
