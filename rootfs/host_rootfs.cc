#include "rootfs/host_rootfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <cstdio>
#include <random>

namespace corral::rootfs {
namespace fs = std::filesystem;
namespace {

// Bump when the skeleton's content changes: a new version is built beside the old.
constexpr char kVersion[] = "host-v4";  // v4: copies keep the host's timestamps

// The skeleton copies part of the host's /etc, so it must follow the host: installing a
// package (a new /etc/R, an alternatives change, ldconfig) changes one of these mtimes, and
// the next sandbox gets a freshly built skeleton. Four stats per launch.
// Copies keep the host's timestamps: whatever caches by a source's mtime must find its cache
// valid. Python does: /etc/python3.X/sitecustomize.py, copied with today's date, made every
// python3 in a sandbox recompile it (its .pyc in read-only /usr is stale) — 2 ms per start.
void copy_times(const fs::path& src, const fs::path& dst) {
  struct stat st;
  if (lstat(src.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(src, ec)) copy_times(e.path(), dst / e.path().filename());
  }
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  utimensat(AT_FDCWD, dst.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

std::string host_fingerprint() {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the mtimes
  for (const char* p : {"/etc", "/etc/alternatives", "/etc/ld.so.cache", "/etc/ssl/certs"}) {
    struct stat st;
    uint64_t v = stat(p, &st) == 0 ? static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + st.st_mtim.tv_nsec : 0;
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Copied from the host's /etc when present (files, symlinks or whole directories).
constexpr const char* kEtcCopies[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs", "ssl/openssl.cnf",
    "ca-certificates", "ca-certificates.conf", "localtime", "timezone", "os-release",
    "debian_version", "mime.types", "protocols", "services", "shells", "bash.bashrc", "profile",
    "inputrc", "gai.conf", "host.conf", "locale.alias", "fonts", "python3", "python3.11",
    "matplotlibrc", "R", "java-17-openjdk", "perl", "gemrc", "magic", "mailcap", "environment",
    "login.defs",
};

constexpr const char* kUsrMergedLinks[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream out(p);
  out << content;
  if (!out) throw fs::filesystem_error("write", p, std::make_error_code(std::errc::io_error));
}

void build(const fs::path& dir) {
  for (const char* d : {"proc", "dev", "tmp", "etc", "usr", "home", "run", "var", "mnt", "opt", "srv"}) {
    fs::create_directories(dir / d);
  }
  // The skeleton belongs to host root, which is unmapped inside a sandbox, so overlay cannot
  // copy its directories up for writing: scratch space that programs expect to write lives
  // on the sandbox's /tmp.
  fs::create_symlink("../tmp", dir / "var/tmp");
  fs::create_directory(dir / "root");
  fs::permissions(dir / "root", fs::perms::owner_all);
  fs::permissions(dir / "tmp", fs::perms::all | fs::perms::sticky_bit);
  for (const char* name : kUsrMergedLinks) {
    fs::path host = fs::path("/") / name;
    std::error_code ec;
    auto st = fs::symlink_status(host, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_symlink(st)) {
      fs::create_symlink(fs::read_symlink(host), dir / name);
    } else if (fs::is_directory(st)) {
      fs::create_directory(dir / name);
    }
  }
  const fs::path etc = dir / "etc";
  for (const char* name : kEtcCopies) {
    fs::path src = fs::path("/etc") / name;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(src, ec))) continue;
    fs::create_directories((etc / name).parent_path());
    fs::copy(src, etc / name, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    copy_times(src, etc / name);
  }
  write_file(etc / "passwd",
             "root:x:0:0:root:/root:/bin/sh\n"
             "sandbox:x:1000:1000:sandbox:/sandbox:/bin/sh\n"
             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  write_file(etc / "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
  write_file(etc / "hosts", "127.0.0.1\tlocalhost corral\n::1\tlocalhost ip6-localhost ip6-loopback\n");
  write_file(etc / "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\nnetworks: files\n");
  write_file(etc / "resolv.conf", "");
  write_file(etc / "hostname", "corral\n");
  fs::create_symlink("../proc/self/mounts", etc / "mtab");
}

}  // namespace

StatusOr<HostRootfs> ensure_host_rootfs(const std::string& rootfs_dir) {
  HostRootfs r;
  r.lower_dir = rootfs_dir + "/" + kVersion + "-" + host_fingerprint();
  r.ro_binds.push_back("/usr");
  for (const char* name : kUsrMergedLinks) {
    struct stat st;
    std::string host = std::string("/") + name;
    if (lstat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) r.ro_binds.push_back(host);
  }
  struct stat st;
  if (stat(r.lower_dir.c_str(), &st) == 0) return r;

  std::error_code ec;
  fs::create_directories(rootfs_dir, ec);
  if (ec) return Status(ErrorCode::kInternal, "create rootfs dir: " + ec.message(), rootfs_dir);
  std::random_device rd;
  fs::path tmp = fs::path(rootfs_dir) / (std::string(".") + kVersion + ".tmp." + std::to_string(rd()));
  // Skeletons of earlier host states stay: a running sandbox may still have one as its
  // lower layer. `corral doctor --cleanup` is the place to prune them.
  try {
    fs::create_directory(tmp);
    fs::permissions(tmp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    build(tmp);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    return Status(ErrorCode::kInternal, std::string("build host rootfs: ") + e.what(), r.lower_dir);
  }
  if (rename(tmp.c_str(), r.lower_dir.c_str()) != 0) {
    int err = errno;
    fs::remove_all(tmp, ec);
    // Another process built it first: theirs is as good as ours.
    if (err == ENOTEMPTY || err == EEXIST) return r;
    return SysError("install host rootfs", err, r.lower_dir);
  }
  return r;
}

}  // namespace corral::rootfs
