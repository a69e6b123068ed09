#include "runtime/files.h"

#include "src/core/sandbox_path.h"
#include "src/core/unique_fd.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace corral::runtime {
namespace {

using Fd = UniqueFd;

// File transfer runs with the sandbox user's host ids as this thread's fs ids: files are
// created as that user, permission checks are that user's, and host root's DAC overrides
// are off for the duration (they drop when fsuid leaves 0). It is also the only way to
// create files at all: host root is unmapped in the sandbox's user namespace, so the
// kernel refuses inodes owned by it (EOVERFLOW). setfsuid is per-thread.
class AsSandboxUser {
 public:
  AsSandboxUser(uid_t uid, gid_t gid) : old_gid_(setfsgid(gid)), old_uid_(setfsuid(uid)) {}
  ~AsSandboxUser() {
    setfsuid(old_uid_);
    setfsgid(old_gid_);
  }

 private:
  int old_gid_;
  int old_uid_;
};

int open_beneath(int root_fd, const std::string& path, uint64_t flags, mode_t mode = 0) {
  struct open_how how = {};
  how.flags = flags | O_CLOEXEC;
  how.mode = mode;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how);
  } while (fd < 0 && errno == EAGAIN);
  return static_cast<int>(fd);
}


std::string join(const std::vector<std::string>& parts, size_t n) {
  std::string out = "/";
  for (size_t i = 0; i < n; ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

StatusOr<Fd> make_parents(int root_fd, const std::vector<std::string>& parts) {
  Fd dir(open_beneath(root_fd, "/", O_PATH | O_DIRECTORY));
  if (dir.get() < 0) return SysError("open sandbox root");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string prefix = join(parts, i + 1);
    Fd next(open_beneath(root_fd, prefix, O_PATH | O_DIRECTORY));
    if (next.get() < 0 && errno == ENOENT) {
      if (mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) return SysError("mkdir", prefix);
      next = Fd(open_beneath(root_fd, prefix, O_PATH | O_DIRECTORY));
    }
    if (next.get() < 0) return SysError("open directory", prefix);
    dir = std::move(next);
  }
  return dir;
}

}  // namespace

Status write_files_beneath(int root_fd, const std::string& workdir, const std::vector<FileEntry>& files, uid_t uid,
                           gid_t gid) {
  AsSandboxUser as_user(uid, gid);
  for (size_t i = 0; i < files.size(); ++i) {
    const FileEntry& f = files[i];
    const std::string field = "files[" + std::to_string(i) + "].path";
    auto parts = split_sandbox_path(field, workdir, f.path);
    if (!parts.ok()) return parts.status();
    auto dir = make_parents(root_fd, *parts);
    if (!dir.ok()) return dir.status();
    const std::string& name = parts->back();
    // O_NOFOLLOW: a symlink planted at the destination is refused, not written through.
    // O_NONBLOCK: a FIFO planted there cannot hang the supervisor.
    Fd fd(openat(dir->get(), name.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, f.mode & 0777));
    if (fd.get() < 0) return SysError("create file in sandbox", f.path);
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return SysError("stat", f.path);
    if (!S_ISREG(st.st_mode)) return Status(ErrorCode::kInvalidArgument, "is not a regular file", f.path);
    if (ftruncate(fd.get(), 0) != 0) return SysError("truncate", f.path);
    if (fchmod(fd.get(), f.mode & 0777) != 0) return SysError("chmod", f.path);
    size_t off = 0;
    while (off < f.data.size()) {
      ssize_t w = write(fd.get(), f.data.data() + off, f.data.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return SysError("write file in sandbox", f.path);
      off += static_cast<size_t>(w);
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<FileEntry>> read_files_beneath(int root_fd, const std::string& workdir,
                                                    const std::vector<std::string>& paths, uint64_t max_bytes, uid_t uid,
                                                    gid_t gid) {
  AsSandboxUser as_user(uid, gid);
  std::vector<FileEntry> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto parts = split_sandbox_path("paths[" + std::to_string(i) + "]", workdir, paths[i]);
    if (!parts.ok()) return parts.status();
    Fd fd(open_beneath(root_fd, join(*parts, parts->size()), O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
      if (errno == ELOOP) return Status(ErrorCode::kInvalidArgument, "is a symlink; refusing to follow it", paths[i]);
      return SysError("open file in sandbox", paths[i]);
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return SysError("stat", paths[i]);
    if (!S_ISREG(st.st_mode)) return Status(ErrorCode::kInvalidArgument, "is not a regular file", paths[i]);
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return Status(ErrorCode::kResourceExhausted,
                    "is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(max_bytes),
                    paths[i]);
    }
    FileEntry e;
    e.path = paths[i];
    e.mode = st.st_mode & 0777;
    e.data.resize(static_cast<size_t>(st.st_size));
    size_t off = 0;
    while (off < e.data.size()) {
      ssize_t r = read(fd.get(), e.data.data() + off, e.data.size() - off);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return SysError("read file in sandbox", paths[i]);
      if (r == 0) break;
      off += static_cast<size_t>(r);
    }
    e.data.resize(off);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace corral::runtime
