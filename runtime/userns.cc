#include "runtime/userns.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "runtime/launch_plan.h"

namespace corral::runtime {

IdSlot& IdSlot::operator=(IdSlot&& o) noexcept {
  if (this != &o) {
    if (lock_fd_ >= 0) close(lock_fd_);
    lock_fd_ = o.lock_fd_;
    slot_ = o.slot_;
    o.lock_fd_ = -1;
  }
  return *this;
}

IdSlot::~IdSlot() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

StatusOr<IdSlot> IdSlot::claim(const std::string& state_dir) {
  static std::atomic<uint32_t> next{static_cast<uint32_t>(getpid()) * 7919u};
  const std::string dir = state_dir + "/uids";
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return SysError("create uid lock dir", dir);
  char path[256];
  for (uint32_t tries = 0; tries < 256; ++tries) {
    uint32_t slot = next.fetch_add(1) % kIdSlots;
    snprintf(path, sizeof path, "%s/%u", dir.c_str(), slot);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return SysError("open uid lock", path);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      IdSlot s;
      s.lock_fd_ = fd;
      s.slot_ = slot;
      return s;
    }
    int e = errno;
    close(fd);
    if (e != EWOULDBLOCK) return SysError("lock uid slot", e, path);
  }
  return Status(ErrorCode::kResourceExhausted, "no free sandbox uid slot after 256 tries", dir);
}

static Status write_file(const char* path, const char* data, size_t len) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open", path);
  ssize_t w = write(fd, data, len);
  int e = errno;
  close(fd);
  if (w != static_cast<ssize_t>(len)) return SysError("write", w < 0 ? e : EIO, path);
  return Status::Ok();
}

Status write_id_maps(pid_t pid, const IdSlot& ids) {
  char path[64], map[128];
  snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
  RETURN_IF_ERROR(write_file(path, "deny", 4));
  int n = snprintf(map, sizeof map, "0 %u 1\n%u %u 1\n", ids.root_host_id(), kSandboxUid, ids.user_host_id());
  snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
  RETURN_IF_ERROR(write_file(path, map, n));
  n = snprintf(map, sizeof map, "0 %u 1\n%u %u 1\n", ids.root_host_id(), kSandboxGid, ids.user_host_id());
  snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
  return write_file(path, map, n);
}

}  // namespace corral::runtime
