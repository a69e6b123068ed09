// Moving files in and out of a running sandbox: the classic escape route, so it lives in
// one audited place. Every path is resolved beneath the sandbox's root with
// openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): a symlink inside the sandbox can point
// anywhere it likes and still resolves inside the sandbox. The final component is never
// followed (O_NOFOLLOW), only regular files are read or written, and files never touch a
// host path.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "src/core/executor.h"

namespace corral::runtime {

// `root_fd`: an O_PATH fd of the sandbox's root (/proc/<init>/root). Relative paths are
// taken relative to `workdir`. Both run as uid:gid (the host ids of the sandbox user), so
// new files belong to that user and nothing is done that the user could not do.
Status write_files_beneath(int root_fd, const std::string& workdir, const std::vector<FileEntry>& files, uid_t uid,
                           gid_t gid);
StatusOr<std::vector<FileEntry>> read_files_beneath(int root_fd, const std::string& workdir,
                                                    const std::vector<std::string>& paths, uint64_t max_bytes, uid_t uid,
                                                    gid_t gid);

}  // namespace corral::runtime
