#include "runtime/mount_ns.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace corral::runtime {
namespace {

int fail(ErrorPayload* err, const char* step, const char* path) {
  make_error(err, step, errno, path);
  return -1;
}

bool exists(const char* path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

// Applies mount attributes to `path` and everything below it. mount_setattr (5.12+) does
// it recursively in one call; older kernels get a non-recursive remount.
int set_attrs(const char* path, uint64_t attrs) {
  struct mount_attr attr = {};
  attr.attr_set = attrs;
  if (mount_setattr(AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr) == 0) return 0;
  if (errno != ENOSYS) return -1;
  unsigned long flags = MS_REMOUNT | MS_BIND;
  if (attrs & MOUNT_ATTR_RDONLY) flags |= MS_RDONLY;
  if (attrs & MOUNT_ATTR_NOSUID) flags |= MS_NOSUID;
  if (attrs & MOUNT_ATTR_NODEV) flags |= MS_NODEV;
  if (attrs & MOUNT_ATTR_NOEXEC) flags |= MS_NOEXEC;
  return mount(nullptr, path, nullptr, flags, nullptr);
}

// mkdir -p, with each created component 0755. `path` must be absolute and short.
int mkdir_p(const char* path) {
  char buf[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  // Usually every parent exists already (the mount points are under the new root): one
  // mkdir then, not one per component.
  if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return -1;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char saved = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
      buf[i] = saved;
    }
  }
  return 0;
}

// Creates the mount point for a bind: a directory, or an empty file for a file bind.
int make_mount_point(const char* target, bool is_file) {
  if (!is_file) return mkdir_p(target);
  if (exists(target)) return 0;
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", target);
  char* slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = '\0';
    if (mkdir_p(parent) != 0) return -1;
  }
  int fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

int bind(const char* source, const char* target, uint64_t attrs) {
  if (mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  return set_attrs(target, attrs);
}

int apply_step(const MountStep& m, ErrorPayload* err) {
  const char* target = m.target.c_str();
  switch (m.kind) {
    case MountStep::Kind::kBindReadonly:
    case MountStep::Kind::kBindWritable: {
      if (make_mount_point(target, m.target_is_file) != 0) return fail(err, "create mount point", target);
      uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (m.kind == MountStep::Kind::kBindReadonly) attrs |= MOUNT_ATTR_RDONLY;
      if (bind(m.source.c_str(), target, attrs) != 0) return fail(err, "bind mount", m.source.c_str());
      return 0;
    }
    case MountStep::Kind::kTmpfs:
      if (mkdir_p(target) != 0) return fail(err, "create mount point", target);
      if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, m.options.c_str()) != 0) {
        return fail(err, "mount tmpfs", target);
      }
      return 0;
    case MountStep::Kind::kMaskFile:
      if (!exists(target)) return 0;
      if (mount("/dev/null", target, nullptr, MS_BIND, nullptr) != 0) return fail(err, "mask", target);
      return 0;
    case MountStep::Kind::kMaskDir:
      if (!exists(target)) return 0;
      if (mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") != 0) {
        return fail(err, "mask", target);
      }
      return 0;
    case MountStep::Kind::kReadonlyInPlace:
      if (!exists(target)) return 0;
      if (bind(target, target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) != 0) {
        return fail(err, "make read-only", target);
      }
      return 0;
  }
  return 0;
}

int build_dev_nodes(const LaunchPlan& plan, ErrorPayload* err);

int build_dev(const LaunchPlan& plan, ErrorPayload* err) {
  const char* dev = plan.dev_target.c_str();
  char target[PATH_MAX];
  if (!plan.dev_template.empty()) {
    // Read-only: nothing can be added to or taken from it; the nodes in it still work (a
    // device's reads and writes are not writes to the filesystem holding its node).
    if (bind(plan.dev_template.c_str(), dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) != 0) {
      return fail(err, "bind /dev", plan.dev_template.c_str());
    }
  } else {
    if (build_dev_nodes(plan, err) != 0) return -1;
  }
  snprintf(target, sizeof target, "%s/pts", dev);
  // newinstance: the sandbox's ptys are its own, never the host's.
  if (mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
    return fail(err, "mount devpts", target);
  }
  snprintf(target, sizeof target, "%s/shm", dev);
  if (bind(plan.shm_source.c_str(), target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) {
    return fail(err, "bind /dev/shm", target);
  }
  return 0;
}

// /dev built per sandbox: a tmpfs with the host's nodes bound in, the mount points for
// devpts and shm, the usual links.
int build_dev_nodes(const LaunchPlan& plan, ErrorPayload* err) {
  const char* dev = plan.dev_target.c_str();
  if (mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, plan.dev_options.c_str()) != 0) {
    return fail(err, "mount /dev tmpfs", dev);
  }
  char target[PATH_MAX];
  char source[64];
  for (const std::string& node : plan.dev_nodes) {
    snprintf(target, sizeof target, "%s/%s", dev, node.c_str());
    snprintf(source, sizeof source, "/dev/%s", node.c_str());
    if (make_mount_point(target, true) != 0) return fail(err, "create device mount point", target);
    // Device nodes need dev access, so no NODEV here; the tmpfs itself is noexec.
    if (bind(source, target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) != 0) return fail(err, "bind device", source);
  }
  snprintf(target, sizeof target, "%s/pts", dev);
  if (mkdir(target, 0755) != 0) return fail(err, "mkdir", target);
  static const char* const kLinks[][2] = {
      {"ptmx", "pts/ptmx"},           {"fd", "/proc/self/fd"},         {"stdin", "/proc/self/fd/0"},
      {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
  };
  for (const auto& link : kLinks) {
    snprintf(target, sizeof target, "%s/%s", dev, link[0]);
    if (symlink(link[1], target) != 0) return fail(err, "symlink", target);
  }
  snprintf(target, sizeof target, "%s/shm", dev);
  if (mkdir(target, 01777) != 0) return fail(err, "mkdir", target);
  return 0;
}

}  // namespace

int build_root_filesystem(const LaunchPlan& plan, ErrorPayload* err) {
  // Nothing this namespace mounts may propagate to the host, and host mount events must not
  // show up here.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail(err, "make / private", "/");

  const char* staging = plan.staging.c_str();
  if (mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV, plan.staging_options.c_str()) != 0) {
    return fail(err, "mount staging tmpfs", staging);
  }
  for (const std::string& d : plan.staging_dirs) {
    if (mkdir(d.c_str(), 0755) != 0) return fail(err, "mkdir", d.c_str());
  }
  // /tmp and /dev/shm are world-writable with the sticky bit, like on any host.
  if (chmod(plan.tmp_source.c_str(), 01777) != 0) return fail(err, "chmod", plan.tmp_source.c_str());
  if (chmod(plan.shm_source.c_str(), 01777) != 0) return fail(err, "chmod", plan.shm_source.c_str());

  const char* root = plan.new_root.c_str();
  if (mount("overlay", root, "overlay", MS_NOSUID | MS_NODEV, plan.overlay_options.c_str()) != 0) {
    return fail(err, "mount overlay root", root);
  }
  for (const MountStep& m : plan.rootfs_mounts) {
    if (apply_step(m, err) != 0) return -1;
  }

  const char* proc = plan.proc_target.c_str();
  if (mkdir_p(proc) != 0) return fail(err, "create mount point", proc);
  // hidepid=invisible: user code (uid 1000) cannot even see corral-init (uid 0) in /proc.
  if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") != 0) {
    return fail(err, "mount proc", proc);
  }
  for (const MountStep& m : plan.proc_masks) {
    if (apply_step(m, err) != 0) return -1;
  }

  if (mkdir_p(plan.dev_target.c_str()) != 0) return fail(err, "create mount point", plan.dev_target.c_str());
  if (build_dev(plan, err) != 0) return -1;

  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  if (mkdir_p(tmp) != 0) return fail(err, "create mount point", tmp);
  if (bind(plan.tmp_source.c_str(), tmp, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) {
    return fail(err, "bind /tmp", tmp);
  }

  for (const MountStep& m : plan.user_mounts) {
    if (apply_step(m, err) != 0) return -1;
  }

  // The workdir belongs to the sandbox user when corral creates it. One the image already
  // has (its WORKDIR) is left as the image made it, as container engines do: its owner is
  // usually host root, unmapped here, so it could not be given away anyway.
  const char* work = plan.workdir_in_root.c_str();
  if (!exists(work)) {
    if (mkdir_p(work) != 0) return fail(err, "create workdir", work);
    if (chown(work, kSandboxUid, kSandboxGid) != 0) return fail(err, "chown workdir", work);
  }

  // pivot_root(".", ".") stacks the old root under the new one; detaching it leaves the
  // sandbox with no path back to the host tree.
  if (chdir(root) != 0) return fail(err, "chdir new root", root);
  if (syscall(SYS_pivot_root, ".", ".") != 0) return fail(err, "pivot_root", root);
  if (umount2(".", MNT_DETACH) != 0) return fail(err, "detach old root", "/");
  if (chdir("/") != 0) return fail(err, "chdir", "/");
  return 0;
}

}  // namespace corral::runtime
