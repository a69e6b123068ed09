#include "backends/common/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

namespace corral::tar {

namespace {

struct WriteCtx {
  std::string* out;
};

la_ssize_t write_cb(struct archive*, void* user, const void* buf, size_t n) {
  static_cast<WriteCtx*>(user)->out->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

int close_cb(struct archive*, void*) { return ARCHIVE_OK; }

struct ArchiveWriter {
  struct archive* a = archive_write_new();
  ~ArchiveWriter() { archive_write_free(a); }
};

Status archive_error(const char* step, struct archive* a) {
  const char* why = archive_error_string(a);
  return Internal(std::string("tar: ") + step + ": " + (why ? why : "unknown error"));
}

Status add(struct archive* a, const Entry& e) {
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> ae(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(ae.get(), e.path.c_str());
  archive_entry_set_uid(ae.get(), e.uid);
  archive_entry_set_gid(ae.get(), e.gid);
  archive_entry_set_mtime(ae.get(), time(nullptr), 0);
  switch (e.type) {
    case Entry::Type::kDir:
      archive_entry_set_filetype(ae.get(), AE_IFDIR);
      archive_entry_set_perm(ae.get(), e.mode & 07777);
      break;
    case Entry::Type::kSymlink:
      archive_entry_set_filetype(ae.get(), AE_IFLNK);
      archive_entry_set_perm(ae.get(), 0777);
      archive_entry_set_symlink(ae.get(), e.link_target.c_str());
      break;
    default:
      archive_entry_set_filetype(ae.get(), AE_IFREG);
      archive_entry_set_perm(ae.get(), e.mode & 07777);
      archive_entry_set_size(ae.get(), static_cast<la_int64_t>(e.data.size()));
  }
  if (archive_write_header(a, ae.get()) != ARCHIVE_OK) return archive_error("write header", a);
  if (e.type == Entry::Type::kFile && !e.data.empty()) {
    if (archive_write_data(a, e.data.data(), e.data.size()) < 0) return archive_error("write data", a);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> write(const std::vector<Entry>& entries) {
  std::string out;
  WriteCtx ctx{&out};
  ArchiveWriter w;
  archive_write_set_format_pax_restricted(w.a);
  archive_write_set_bytes_in_last_block(w.a, 1);
  if (archive_write_open(w.a, &ctx, nullptr, write_cb, close_cb) != ARCHIVE_OK) return archive_error("open", w.a);
  for (const Entry& e : entries) RETURN_IF_ERROR(add(w.a, e));
  if (archive_write_close(w.a) != ARCHIVE_OK) return archive_error("close", w.a);
  return out;
}

StatusOr<std::vector<Entry>> read(const std::string& archive, uint64_t max_file_bytes) {
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), archive.data(), archive.size()) != ARCHIVE_OK) {
    return archive_error("open", a.get());
  }
  std::vector<Entry> out;
  archive_entry* ae;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &ae)) == ARCHIVE_OK) {
    Entry e;
    e.path = archive_entry_pathname(ae) ? archive_entry_pathname(ae) : "";
    e.mode = archive_entry_perm(ae);
    e.uid = static_cast<uint32_t>(archive_entry_uid(ae));
    e.gid = static_cast<uint32_t>(archive_entry_gid(ae));
    e.size = static_cast<uint64_t>(archive_entry_size(ae));
    switch (archive_entry_filetype(ae)) {
      case AE_IFREG: e.type = Entry::Type::kFile; break;
      case AE_IFDIR: e.type = Entry::Type::kDir; break;
      case AE_IFLNK:
        e.type = Entry::Type::kSymlink;
        e.link_target = archive_entry_symlink(ae) ? archive_entry_symlink(ae) : "";
        break;
      default: e.type = Entry::Type::kOther;
    }
    if (archive_entry_hardlink(ae)) e.type = Entry::Type::kOther;
    if (e.type == Entry::Type::kFile) {
      if (e.size > max_file_bytes) {
        return Status(ErrorCode::kResourceExhausted,
                      "is " + std::to_string(e.size) + " bytes, over the limit of " + std::to_string(max_file_bytes),
                      e.path);
      }
      e.data.resize(e.size);
      la_ssize_t n = archive_read_data(a.get(), e.data.data(), e.data.size());
      if (n < 0) return archive_error("read data", a.get());
      e.data.resize(static_cast<size_t>(n));
    }
    out.push_back(std::move(e));
  }
  if (rc != ARCHIVE_EOF) return archive_error("read header", a.get());
  return out;
}

namespace {

struct TreeWalk {
  std::string root;
  struct archive* a;
  Status status;
};
thread_local TreeWalk* g_walk = nullptr;  // nftw has no user pointer

int visit(const char* path, const struct stat* st, int type, struct FTW*) {
  TreeWalk& w = *g_walk;
  std::string rel = path == w.root ? "." : "." + std::string(path + w.root.size());
  Entry e;
  e.path = rel;
  e.mode = st->st_mode & 07777;
  e.uid = st->st_uid;
  e.gid = st->st_gid;
  if (type == FTW_D || type == FTW_DP) {
    e.type = Entry::Type::kDir;
  } else if (type == FTW_SL || type == FTW_SLN) {
    e.type = Entry::Type::kSymlink;
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf);
    if (n < 0) {
      w.status = SysError("readlink", path);
      return 1;
    }
    e.link_target.assign(buf, static_cast<size_t>(n));
  } else if (S_ISREG(st->st_mode)) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      w.status = SysError("open", path);
      return 1;
    }
    e.data.resize(static_cast<size_t>(st->st_size));
    size_t off = 0;
    while (off < e.data.size()) {
      ssize_t r = ::read(fd, e.data.data() + off, e.data.size() - off);
      if (r <= 0) break;
      off += static_cast<size_t>(r);
    }
    close(fd);
    e.data.resize(off);
  } else {
    return 0;  // devices, sockets, fifos: a rootfs gets its /dev from the engine
  }
  w.status = add(w.a, e);
  return w.status.ok() ? 0 : 1;
}

}  // namespace

StatusOr<std::string> write_tree(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return SysError("stat", dir);
  if (!S_ISDIR(st.st_mode)) return InvalidArgument(dir, "is not a directory");
  std::string out;
  WriteCtx ctx{&out};
  ArchiveWriter w;
  archive_write_set_format_pax_restricted(w.a);
  if (archive_write_open(w.a, &ctx, nullptr, write_cb, close_cb) != ARCHIVE_OK) return archive_error("open", w.a);
  TreeWalk walk{dir, w.a, Status::Ok()};
  while (walk.root.size() > 1 && walk.root.back() == '/') walk.root.pop_back();
  g_walk = &walk;
  int rc = nftw(walk.root.c_str(), visit, 64, FTW_PHYS);
  g_walk = nullptr;
  if (!walk.status.ok()) return walk.status;
  if (rc != 0) return SysError("walk", dir);
  if (archive_write_close(w.a) != ARCHIVE_OK) return archive_error("close", w.a);
  return out;
}

}  // namespace corral::tar
