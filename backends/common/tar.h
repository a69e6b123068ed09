// Tar archives in memory (libarchive): what the engines' archive, import and build APIs
// take and return. Reading never touches the filesystem, so a hostile archive (names with
// "..", absolute names, links) can only ever produce data in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral::tar {

struct Entry {
  enum class Type { kFile, kDir, kSymlink, kOther } type = Type::kFile;
  std::string path;  // as stored in the archive
  std::string data;  // files only
  std::string link_target;  // symlinks only
  uint32_t mode = 0644;
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
};

// A POSIX (pax) tar of `entries`, in order.
StatusOr<std::string> write(const std::vector<Entry>& entries);

// Every entry of `archive`; a file larger than `max_file_bytes` is kResourceExhausted naming it.
StatusOr<std::vector<Entry>> read(const std::string& archive, uint64_t max_file_bytes);

// A directory tree (a rootfs, a build context) as a tar, owners and modes kept, symlinks
// stored as links. Paths in the archive are relative ("./usr/bin/...").
StatusOr<std::string> write_tree(const std::string& dir);

}  // namespace corral::tar
