#include "runtime/dev_template.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

namespace corral::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
constexpr const char* kLinks[][2] = {
    {"ptmx", "pts/ptmx"},           {"fd", "/proc/self/fd"},         {"stdin", "/proc/self/fd/0"},
    {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
};

Status build(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0) return SysError("mkdir", dir);
  for (const char* node : kNodes) {
    std::string host = std::string("/dev/") + node;
    struct stat st;
    if (stat(host.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return SysError("stat device", host);
    std::string path = dir + "/" + node;
    if (mknod(path.c_str(), S_IFCHR | 0666, st.st_rdev) != 0) return SysError("mknod", path);
    if (chmod(path.c_str(), 0666) != 0) return SysError("chmod", path);  // past the umask
  }
  for (const char* d : {"pts", "shm"}) {
    std::string path = dir + "/" + d;
    if (mkdir(path.c_str(), 0755) != 0) return SysError("mkdir", path);
  }
  for (const auto& link : kLinks) {
    std::string path = dir + "/" + link[0];
    if (symlink(link[1], path.c_str()) != 0) return SysError("symlink", path);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> ensure_dev_template(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return SysError("stat", dir);
    std::error_code ec;
    const std::string parent = fs::path(dir).parent_path().string();
    fs::create_directories(parent, ec);
    if (ec) return Status(ErrorCode::kInternal, "create " + parent + ": " + ec.message());
    struct statvfs vfs;
    if (statvfs(parent.c_str(), &vfs) != 0) return SysError("statvfs", parent);
    if (vfs.f_flag & ST_NODEV) return std::string();
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".tmp-%d", static_cast<int>(getpid()));
    const std::string staging = dir + tmp;
    fs::remove_all(staging, ec);
    Status built = build(staging);
    // Another process may have put one in place meanwhile: theirs is as good.
    if (built.ok() && rename(staging.c_str(), dir.c_str()) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
      built = SysError("rename", staging);
    }
    fs::remove_all(staging, ec);
    if (!built.ok()) return built;
    if (lstat(dir.c_str(), &st) != 0) return SysError("stat", dir);
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
    return Status(ErrorCode::kInternal, dir + " is not a directory owned by root");
  }
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) != 0) return SysError("statvfs", dir);
  if (vfs.f_flag & ST_NODEV) return std::string();
  return dir;
}

}  // namespace corral::runtime
