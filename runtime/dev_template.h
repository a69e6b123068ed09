// A sandbox's /dev, made once on the host: the device nodes a program expects (null, zero,
// full, random, urandom, tty, with the host's device numbers), empty pts/ and shm/ mount
// points, and the usual links (ptmx, fd, stdin, stdout, stderr). corral-init bind-mounts it
// read-only, nosuid and noexec (devpts and the sandbox's shm go on top): two mounts where a
// tmpfs with a bind per node took a dozen, on every sandbox's start.
#pragma once

#include <string>

#include "src/core/status.h"

namespace corral::runtime {

// Makes `dir` if it is missing (built beside it, then renamed into place: concurrent
// callers agree). Returns "" (and the caller builds /dev per sandbox) where device nodes on
// `dir`'s filesystem could not be opened: it is mounted nodev.
StatusOr<std::string> ensure_dev_template(const std::string& dir);

}  // namespace corral::runtime
