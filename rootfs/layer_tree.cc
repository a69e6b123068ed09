#include "rootfs/layer_tree.h"

#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>

#include <cstring>
#include <memory>
#include <set>

namespace corral::rootfs::layer {
std::string join(const std::vector<std::string>& c, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "/" : "") + c[i];
  return out;
}

std::vector<std::string> split(const std::string& p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    out.push_back(p.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string human(uint64_t bytes) {
  char buf[32];
  if (bytes < 1000) snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < 1000000) snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(bytes) / 1e3);
  else snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A tar entry's path as components below the root: a leading '/' and '.' components are
// dropped (absolute entries are rooted at the rootfs), '..' is refused outright.
StatusOr<std::vector<std::string>> entry_components(const char* raw, const std::string& label,
                                                    const std::string& what) {
  if (raw == nullptr) return InvalidArgument(label, what + " without a path");
  const std::string p = raw;
  if (p.size() >= PATH_MAX) return InvalidArgument(label, what + " '" + p.substr(0, 64) + "...': path too long");
  std::vector<std::string> out;
  for (std::string& c : split(p)) {
    if (c.empty() || c == ".") continue;
    if (c == "..") return InvalidArgument(label, what + " '" + p + "': '..' in the path would leave the rootfs");
    out.push_back(std::move(c));
  }
  if (out.size() > kMaxComponents) return InvalidArgument(label, what + " '" + p + "': path too deep");
  return out;
}

// Removes `name` below `dirfd` — a file, a link or a whole tree — never following links.
// Directories the image made unwritable (0555) are opened up first. Returns 0 or an errno.
int remove_at(int dirfd, const char* name) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return 0;
  if (errno != EISDIR && errno != EPERM) return errno;
  Fd d(openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d.ok() && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0) {
    d.reset(openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!d.ok()) return errno;
  (void)fchmod(d.get(), 0700);  // may fail when not ours; then unlinking says why
  std::vector<std::string> names;
  if (DIR* dir = fdopendir(fcntl(d.get(), F_DUPFD_CLOEXEC, 3))) {
    while (dirent* e = readdir(dir)) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    closedir(dir);
  } else {
    return errno;
  }
  for (const auto& n : names) {
    if (int err = remove_at(d.get(), n.c_str())) return err;
  }
  if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) return errno;
  return 0;
}

Status remove_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  Fd dir(open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.ok()) return errno == ENOENT ? Status::Ok() : SysError("open", parent);
  if (int err = remove_at(dir.get(), path.substr(slash + 1).c_str())) return SysError("remove", err, path);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// The tree a layer is applied to. See oci.h for the rules it enforces.



Status Tree::apply(struct archive* a, const std::string& label) {
  label_ = label;
  layer_paths_.clear();
  cache_fd_.reset();
  layer_start_ = bytes;
  next_report_ = bytes + kProgressEvery;
  struct archive_entry* e = nullptr;
  while (true) {
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      const char* msg = archive_error_string(a);
      return InvalidArgument(label, std::string("cannot read the layer: ") + (msg ? msg : "unknown libarchive error"));
    }
    ++entries;
    RETURN_IF_ERROR(entry(a, e));
  }
  cache_fd_.reset();
  return Status::Ok();
}

void Tree::mark(const std::vector<std::string>& comps, size_t n) {
  std::string p;
  for (size_t i = 0; i < n; ++i) {
    p += (i ? "/" : "") + comps[i];
    layer_paths_.insert(p);
  }
}

void Tree::forget(const std::string& path) {
  dirs_.erase(dirs_.lower_bound(path), dirs_.lower_bound(path + "0"));  // path, path/...  ('0' follows '/')
  links_.erase(links_.lower_bound(path), links_.lower_bound(path + "0"));
  if (cache_fd_.ok() && (cache_key_ == path || cache_key_.compare(0, path.size() + 1, path + "/") == 0)) {
    cache_fd_.reset();
  }
}

StatusOr<Fd> Tree::walk(const std::vector<std::string>& comps, size_t n, bool create, const std::string& shown) {
  Fd cur(openat(root_, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!cur.ok()) return sys(shown, "open the rootfs root", errno);
  for (size_t i = 0; i < n; ++i) {
    const char* c = comps[i].c_str();
    int fd = openat(cur.get(), c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (mkdirat(cur.get(), c, 0700) != 0 && errno != EEXIST) return sys(shown, "mkdir " + join(comps, i + 1), errno);
      dirs_.emplace(join(comps, i + 1), DirMeta{});
      fd = openat(cur.get(), c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      const int err = errno;
      const std::string sub = join(comps, i + 1);
      if (err == ENOENT) return Status(ErrorCode::kNotFound, "entry '" + shown + "': '" + sub + "' does not exist", label_);
      struct stat st;
      if (err == ENOTDIR && fstatat(cur.get(), c, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) {
          return fail(shown, "its path goes through the symlink '" + sub +
                                 "' (links already extracted are never followed)");
        }
        return fail(shown, "'" + sub + "' is not a directory");
      }
      return sys(shown, "open " + sub, err);
    }
    cur.reset(fd);
  }
  return cur;
}

StatusOr<int> Tree::parent_of(const std::vector<std::string>& comps, const std::string& shown) {
  std::string key = join(comps, comps.size() - 1);
  if (cache_fd_.ok() && key == cache_key_) return cache_fd_.get();
  ASSIGN_OR_RETURN(Fd fd, walk(comps, comps.size() - 1, true, shown));
  cache_fd_ = std::move(fd);
  cache_key_ = std::move(key);
  return cache_fd_.get();
}

Status Tree::clear_slot(int dir, const std::string& name, const std::string& path, bool dir_ok, bool* kept,
                        const std::string& shown) {
  *kept = false;
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok() : sys(shown, "stat", errno);
  }
  if (dir_ok && S_ISDIR(st.st_mode)) {
    *kept = true;
    return Status::Ok();
  }
  if (int err = remove_at(dir, name.c_str())) return sys(shown, "replace the existing entry", err);
  forget(path);
  return Status::Ok();
}

Status Tree::entry(struct archive* a, struct archive_entry* e) {
  const char* raw = archive_entry_pathname_utf8(e);
  if (raw == nullptr) raw = archive_entry_pathname(e);
  const std::string shown = raw ? raw : "";
  ASSIGN_OR_RETURN(std::vector<std::string> comps, entry_components(raw, label_, "entry"));
  if (comps.empty()) return Status::Ok();  // "./": the root keeps its 0755
  const std::string path = join(comps, comps.size());
  const std::string& name = comps.back();
  if (image_ && name.starts_with(".wh.")) return whiteout(comps, shown);
  if (image_) mark(comps, comps.size());

  const mode_t perm = archive_entry_perm(e) & 01777;  // setuid and setgid stripped
  timespec mtime{0, UTIME_OMIT};
  if (archive_entry_mtime_is_set(e)) mtime = {archive_entry_mtime(e), archive_entry_mtime_nsec(e)};
  const timespec times[2] = {mtime, mtime};

  const char* link_target = archive_entry_hardlink_utf8(e);
  if (link_target == nullptr) link_target = archive_entry_hardlink(e);
  const mode_t type = archive_entry_filetype(e);
  if (link_target == nullptr) {
    if (type == AE_IFCHR || type == AE_IFBLK) {
      return fail(shown, std::string(type == AE_IFCHR ? "character" : "block") +
                             " device nodes are not allowed in an image");
    }
    if (type == AE_IFIFO || type == AE_IFSOCK) {  // skipped: see oci.h
      ++skipped;
      return Status::Ok();
    }
    if (type != AE_IFDIR && type != AE_IFREG && type != AE_IFLNK) return fail(shown, "unknown entry type");
  }
  ASSIGN_OR_RETURN(int dir, parent_of(comps, shown));
  if (link_target != nullptr) return hardlink(link_target, dir, comps, shown);

  bool kept = false;
  RETURN_IF_ERROR(clear_slot(dir, name, path, type == AE_IFDIR, &kept, shown));
  if (type == AE_IFDIR) {
    if (!kept && mkdirat(dir, name.c_str(), 0700) != 0) return sys(shown, "mkdir", errno);
    dirs_[path] = DirMeta{perm, mtime.tv_nsec != UTIME_OMIT, mtime};
    return Status::Ok();
  }
  if (type == AE_IFLNK) {
    const char* t = archive_entry_symlink_utf8(e);
    if (t == nullptr) t = archive_entry_symlink(e);
    if (t == nullptr || *t == '\0') return fail(shown, "symlink without a target");
    if (image_) RETURN_IF_ERROR(check_link_lexically(comps, t, shown));
    if (symlinkat(t, dir, name.c_str()) != 0) return sys(shown, "symlink", errno);
    (void)utimensat(dir, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
    if (image_) links_[path] = label_;
    return Status::Ok();
  }
  Fd f(openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!f.ok()) return sys(shown, "create", errno);
  const void* buf = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  int r;
  while ((r = archive_read_data_block(a, &buf, &size, &offset)) == ARCHIVE_OK) {
    const char* p = static_cast<const char*>(buf);
    while (size > 0) {
      ssize_t w = pwrite(f.get(), p, size, offset);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return sys(shown, "write", w < 0 ? errno : EIO);
      p += w;
      size -= static_cast<size_t>(w);
      offset += w;
      bytes += static_cast<uint64_t>(w);
    }
  }
  if (r != ARCHIVE_EOF) {
    const char* msg = archive_error_string(a);
    return fail(shown, std::string("cannot read its data: ") + (msg ? msg : "unknown libarchive error"));
  }
  if (archive_entry_size_is_set(e) && ftruncate(f.get(), archive_entry_size(e)) != 0) return sys(shown, "truncate", errno);
  if (fchmod(f.get(), perm) != 0) return sys(shown, "chmod", errno);
  (void)futimens(f.get(), times);
  if (progress_ && bytes >= next_report_) {
    progress_(label_ + ": " + human(bytes - layer_start_) + " written so far");
    next_report_ = bytes + kProgressEvery;
  }
  return Status::Ok();
}

Status Tree::hardlink(const char* target, int dir, const std::vector<std::string>& comps, const std::string& shown) {
  ASSIGN_OR_RETURN(std::vector<std::string> tc, entry_components(target, label_, "hardlink '" + shown + "' to"));
  if (tc.empty()) return fail(shown, "hardlink to the root directory");
  const std::string path = join(comps, comps.size());
  const std::string tpath = join(tc, tc.size());
  if (tpath == path) return Status::Ok();
  const std::string missing = "hardlink target '" + std::string(target) +
                              "' is not a file already in the image (links cannot point outside the rootfs)";
  auto tdir = walk(tc, tc.size() - 1, false, shown);
  if (!tdir.ok()) return tdir.status().code() == ErrorCode::kNotFound ? fail(shown, missing) : tdir.status();
  struct stat st;
  if (fstatat(tdir->get(), tc.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? fail(shown, missing) : sys(shown, "stat the hardlink target", errno);
  }
  if (S_ISDIR(st.st_mode)) return fail(shown, "hardlink to a directory");
  std::string link_text;
  if (S_ISLNK(st.st_mode) && image_) {  // the same link text, read from another place
    char buf[PATH_MAX];
    ssize_t n = readlinkat(tdir->get(), tc.back().c_str(), buf, sizeof buf - 1);
    if (n < 0) return sys(shown, "readlink the hardlink target", errno);
    link_text.assign(buf, static_cast<size_t>(n));
    RETURN_IF_ERROR(check_link_lexically(comps, link_text, shown));
  }
  bool kept = false;
  RETURN_IF_ERROR(clear_slot(dir, comps.back(), path, false, &kept, shown));
  if (linkat(tdir->get(), tc.back().c_str(), dir, comps.back().c_str(), 0) != 0) return sys(shown, "hardlink", errno);
  if (!link_text.empty()) links_[path] = label_;
  return Status::Ok();
}

Status Tree::whiteout(const std::vector<std::string>& comps, const std::string& shown) {
  const std::string& base = comps.back();
  const size_t n = comps.size() - 1;  // the directory the whiteout lives in
  mark(comps, n);
  if (base == ".wh..wh..opq") {
    ASSIGN_OR_RETURN(Fd dir, walk(comps, n, true, shown));
    return hide_lower(dir.get(), join(comps, n), shown);
  }
  if (base.starts_with(".wh..wh.")) {  // aufs bookkeeping (.wh..wh.plnk ...): not content
    ++skipped;
    return Status::Ok();
  }
  const std::string victim = base.substr(4);
  if (victim.empty() || victim == "." || victim == "..") return fail(shown, "whiteout of an invalid name");
  auto dir = walk(comps, n, false, shown);
  if (!dir.ok()) return dir.status().code() == ErrorCode::kNotFound ? Status::Ok() : dir.status();
  const std::string path = n == 0 ? victim : join(comps, n) + "/" + victim;
  struct stat st;
  if (fstatat(dir->get(), victim.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok() : sys(shown, "stat the whited-out entry", errno);
  }
  if (layer_paths_.count(path)) {  // this layer's own entry stays; only lower content goes
    if (!S_ISDIR(st.st_mode)) return Status::Ok();
    Fd sub(openat(dir->get(), victim.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.ok()) return sys(shown, "open the whited-out directory", errno);
    return hide_lower(sub.get(), path, shown);
  }
  if (int err = remove_at(dir->get(), victim.c_str())) return sys(shown, "remove the whited-out entry", err);
  forget(path);
  return Status::Ok();
}

// Removes what lower layers put below `dirfd` (path `prefix`), keeping this layer's entries.
Status Tree::hide_lower(int dirfd, const std::string& prefix, const std::string& shown) {
  std::vector<std::string> names;
  Fd rd(openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = rd.ok() ? fdopendir(rd.get()) : nullptr;
  if (d == nullptr) return sys(shown, "read directory '" + prefix + "'", errno);
  rd.release();  // owned by d now
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  closedir(d);
  for (const auto& n : names) {
    const std::string child = prefix.empty() ? n : prefix + "/" + n;
    if (layer_paths_.count(child)) {
      Fd sub(openat(dirfd, n.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.ok()) RETURN_IF_ERROR(hide_lower(sub.get(), child, shown));
      continue;
    }
    if (int err = remove_at(dirfd, n.c_str())) return sys(shown, "remove lower-layer '" + child + "'", err);
    forget(child);
  }
  return Status::Ok();
}

Status Tree::check_link_lexically(const std::vector<std::string>& comps, const std::string& target,
                                  const std::string& shown) const {
  size_t depth = target[0] == '/' ? 0 : comps.size() - 1;
  for (const std::string& c : split(target)) {
    if (c.empty() || c == ".") continue;
    if (c != "..") {
      ++depth;
    } else if (depth-- == 0) {
      return fail(shown, "symlink target '" + target + "' climbs out of the rootfs");
    }
  }
  return Status::Ok();
}

// Follows `target` from directory `cur` as the kernel would inside a sandbox whose root is
// this tree, except that '..' at the root is an escape rather than a no-op.
Tree::Resolved Tree::resolve(std::vector<std::string>& cur, const std::string& target, int& hops, int& steps) const {
  if (!target.empty() && target[0] == '/') cur.clear();
  for (const std::string& c : split(target)) {
    if (c.empty() || c == ".") continue;
    if (--steps < 0) return Resolved::kTooComplex;
    if (c == "..") {
      if (cur.empty()) return Resolved::kEscapes;
      cur.pop_back();
      continue;
    }
    cur.push_back(c);
    // Every earlier component of `cur` is a resolved directory (or absent), so this
    // lookup follows nothing but is the component itself.
    const std::string p = join(cur, cur.size());
    struct stat st;
    if (fstatat(root_, p.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) continue;
    if (--hops < 0) return Resolved::kLoop;  // ELOOP for the kernel: nothing escapes
    char buf[PATH_MAX];
    ssize_t n = readlinkat(root_, p.c_str(), buf, sizeof buf - 1);
    if (n <= 0) continue;
    cur.pop_back();
    Resolved r = resolve(cur, std::string(buf, static_cast<size_t>(n)), hops, steps);
    if (r != Resolved::kInside) return r;
  }
  return Resolved::kInside;
}

Status Tree::finish() {
  for (const auto& [path, label] : links_) {
    std::vector<std::string> cur = split(path);
    auto dir = walk(cur, cur.size() - 1, false, path);
    char buf[PATH_MAX];
    ssize_t n = dir.ok() ? readlinkat(dir->get(), cur.back().c_str(), buf, sizeof buf - 1) : -1;
    if (n <= 0) continue;  // replaced since
    const std::string target(buf, static_cast<size_t>(n));
    cur.pop_back();
    int hops = kMaxLinkHops, steps = kMaxLinkSteps;
    Resolved r = resolve(cur, target, hops, steps);
    if (r == Resolved::kEscapes) {
      return InvalidArgument(label, "entry '" + path + "': symlink target '" + target +
                                        "' climbs out of the rootfs (following the image's other links)");
    }
    if (r == Resolved::kTooComplex) {
      return InvalidArgument(label, "entry '" + path + "': symlink target '" + target + "' is too complex to check");
    }
  }
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {  // children before parents
    const std::vector<std::string> comps = split(it->first);
    auto dir = walk(comps, comps.size(), false, it->first);
    if (!dir.ok()) continue;  // replaced by a non-directory since
    Fd rd(openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rd.ok() || fchmod(rd.get(), it->second.mode) != 0) return sys(it->first, "chmod directory", errno);
    if (it->second.has_time) {
      const timespec t[2] = {it->second.mtime, it->second.mtime};
      (void)futimens(rd.get(), t);
    }
  }
  if (fchmod(root_, 0755) != 0) return SysError("chmod the rootfs root", errno);
  return Status::Ok();
}

}  // namespace corral::rootfs::layer
