// Applying image layers to a directory tree, safely: the one dangerous operation of image
// import, in one place (see oci.h for the rules). Entries are written through directory
// fds opened one component at a time with O_NOFOLLOW, so no symlink — not even one an
// earlier layer planted — is ever followed; whiteouts and opaque directories follow the
// OCI image spec; every symlink of the finished tree is resolved as a sandbox would and
// refused if it climbs out.
#pragma once

#include <archive.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/core/status.h"
#include "src/core/unique_fd.h"

namespace corral::rootfs::layer {

using Progress = std::function<void(const std::string&)>;

constexpr size_t kMaxComponents = 256;   // of one entry path
constexpr size_t kMaxJson = 16u << 20;   // index, manifest or config blob
constexpr int kMaxLinkHops = 40;         // the kernel's MAXSYMLINKS
constexpr int kMaxLinkSteps = 4096;      // components looked at while resolving one link
constexpr uint64_t kProgressEvery = 256ull << 20;

using Fd = UniqueFd;

class Tree {
 public:
  // `image`: apply whiteouts and check symlinks (an image layer); otherwise just unpack
  // safely (the outer tarball of `docker save`, whose files are opened RESOLVE_IN_ROOT).
  Tree(int rootfd, bool image, const Progress& progress) : root_(rootfd), image_(image), progress_(progress) {}

  Status apply(struct archive* a, const std::string& label);
  // Checks every symlink of the final tree, then gives directories their modes and times.
  Status finish();

  uint64_t entries = 0, bytes = 0, skipped = 0;

 private:
  enum class Resolved { kInside, kEscapes, kLoop, kTooComplex };
  struct DirMeta {
    mode_t mode = 0755;
    bool has_time = false;
    timespec mtime{};
  };

  Status entry(struct archive* a, struct archive_entry* e);
  Status whiteout(const std::vector<std::string>& comps, const std::string& shown);
  Status hide_lower(int dirfd, const std::string& prefix, const std::string& shown);
  Status hardlink(const char* target, int dir, const std::vector<std::string>& comps, const std::string& shown);
  StatusOr<Fd> walk(const std::vector<std::string>& comps, size_t n, bool create, const std::string& shown);
  StatusOr<int> parent_of(const std::vector<std::string>& comps, const std::string& shown);
  // Makes room for a new entry at dir/name; keeps an existing directory when `dir_ok`.
  Status clear_slot(int dir, const std::string& name, const std::string& path, bool dir_ok, bool* kept,
                    const std::string& shown);
  void forget(const std::string& path);
  void mark(const std::vector<std::string>& comps, size_t n);
  Status check_link_lexically(const std::vector<std::string>& comps, const std::string& target,
                              const std::string& shown) const;
  Resolved resolve(std::vector<std::string>& cur, const std::string& target, int& hops, int& steps) const;
  Status fail(const std::string& shown, const std::string& what) const {
    return InvalidArgument(label_, "entry '" + shown + "': " + what);
  }
  Status sys(const std::string& shown, const std::string& step, int err) const {
    Status s = SysError(step, err);
    return Status(s.code(), "entry '" + shown + "': " + step, label_, err);
  }

  int root_;
  bool image_;
  const Progress& progress_;
  std::string label_;
  std::unordered_set<std::string> layer_paths_;  // written by the current layer, with ancestors
  std::map<std::string, DirMeta> dirs_;          // every directory: final mode and time
  std::map<std::string, std::string> links_;     // symlink path -> label of its layer
  std::string cache_key_;                        // parent directory of the last entry
  Fd cache_fd_;
  uint64_t layer_start_ = 0, next_report_ = kProgressEvery;
};

// "1.5 MiB".
std::string human(uint64_t bytes);
// Exactly 64 lowercase hex digits.
bool is_hex64(const std::string& s);
// Removes `name` below `dirfd` — a file, a link or a whole tree — never following links.
// Returns 0 or an errno.
int remove_at(int dirfd, const char* name);
Status remove_path(const std::string& path);

}  // namespace corral::rootfs::layer
