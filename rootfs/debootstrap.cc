#include "rootfs/debootstrap.h"

#include <dirent.h>
#include <ftw.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

namespace corral::rootfs {
namespace {

// ---- what gets built ---------------------------------------------------------------------

constexpr char kSuite[] = "bookworm";
// Bump a version to invalidate what was built before: a new directory is built beside it.
constexpr char kBaseLayer[] = "debian-bookworm-base-v1";
constexpr char kLangLayerVersion[] = "v1";
constexpr char kDefaultMirror[] = "http://deb.debian.org/debian";

struct Recipe {
  const char* lang;
  std::vector<const char*> packages;  // apt-get install --no-install-recommends
};

// The one table of languages and their packages (sorted by language).
const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> kRecipes = {
      {"bash", {"bash", "coreutils"}},  // both are in the base already: an empty layer
      {"cpp", {"g++"}},
      {"go", {"golang-go"}},
      {"java", {"default-jdk-headless"}},
      {"javascript", {"nodejs"}},
      // python3-munkres satisfies fonttools' "python3-scipy | python3-munkres" before apt picks
      // scipy, whose python3-pythran drags in g++, boost and the Python headers (~250 MB).
      {"python", {"python3", "python3-numpy", "python3-pandas", "python3-munkres", "python3-matplotlib", "python3-pip"}},
      {"r", {"r-base-core"}},
      {"ruby", {"ruby"}},
  };
  return kRecipes;
}

// Files written into the base. Docs, man pages and translations are left out of every layer
// (dpkg path-exclude), as in Debian's slim container images; man directories stay because
// update-alternatives needs them (openjdk's postinst fails without /usr/share/man/man1).
constexpr char kDpkgSlim[] =
    "path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\n"
    "path-exclude /usr/share/man/*\npath-exclude /usr/share/info/*\n"
    "path-exclude /usr/share/locale/*\npath-include /usr/share/locale/locale.alias\n"
    "path-exclude /usr/share/lintian/*\n";
constexpr char kAptConf[] =
    "APT::Install-Recommends \"false\";\nAPT::Install-Suggests \"false\";\n"
    "Acquire::Languages \"none\";\nDir::Cache::pkgcache \"\";\nDir::Cache::srcpkgcache \"\";\n";
// No service starts while packages are installed into a chroot.
constexpr char kPolicyRcd[] = "#!/bin/sh\nexit 101\n";

using Progress = std::function<void(const std::string&)>;

// ---- small file helpers ------------------------------------------------------------------

bool is_dir(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_whiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

std::string read_file(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file(const std::string& p, const std::string& content, mode_t mode = 0644) {
  const std::string tmp = p + ".corral-tmp";
  unlink(tmp.c_str());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return SysError("write", tmp);
  bool ok = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ok = fchmod(fd, mode) == 0 && ok;
  int err = errno;
  close(fd);
  if (!ok) return unlink(tmp.c_str()), SysError("write", err, tmp);
  if (rename(tmp.c_str(), p.c_str()) != 0) return SysError("install", p);
  return Status::Ok();
}

std::vector<std::string> list_dir(int dirfd) {
  std::vector<std::string> names;
  int fd = dup(dirfd);
  DIR* d = fd < 0 ? nullptr : fdopendir(fd);
  if (!d) {
    if (fd >= 0) close(fd);
    return names;
  }
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  }
  closedir(d);
  return names;
}

int open_dir(int at, const std::string& name) {
  return openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// Removes everything below `dirfd` without crossing into another filesystem (so a bind
// mount that somehow survived can never take host files with it). False if anything stayed.
bool remove_contents(int dirfd, dev_t dev) {
  bool ok = true;
  for (const std::string& name : list_dir(dirfd)) {
    struct stat st;
    if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != dev) {
        ok = false;
        continue;
      }
      int sub = open_dir(dirfd, name);
      if (sub < 0) {
        ok = false;
        continue;
      }
      ok = remove_contents(sub, dev) && ok;
      close(sub);
      ok = unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) == 0 && ok;
    } else {
      ok = unlinkat(dirfd, name.c_str(), 0) == 0 && ok;
    }
  }
  return ok;
}

bool remove_tree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return unlink(path.c_str()) == 0;
  int fd = open_dir(AT_FDCWD, path);
  if (fd < 0) return false;
  bool ok = remove_contents(fd, st.st_dev);
  close(fd);
  return ok && rmdir(path.c_str()) == 0;
}

// Deletes the files (not whiteouts, not directories) below `dir` for which `drop` says so;
// with `prune_dirs`, directories left empty go too.
void prune_files(const std::string& dir, const std::function<bool(const std::string&)>& drop, bool prune_dirs) {
  int fd = open_dir(AT_FDCWD, dir);
  if (fd < 0) return;
  for (const std::string& name : list_dir(fd)) {
    struct stat st;
    if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || is_whiteout(st)) continue;
    if (S_ISDIR(st.st_mode)) {
      prune_files(dir + "/" + name, drop, prune_dirs);
      if (prune_dirs) unlinkat(fd, name.c_str(), AT_REMOVEDIR);  // fails harmlessly unless empty
    } else if (drop(name)) {
      unlinkat(fd, name.c_str(), 0);
    }
  }
  close(fd);
}

// Bytes on disk below `dir` (one filesystem), hard links counted once.
uint64_t g_usage;
std::set<std::pair<dev_t, ino_t>> g_seen;
uint64_t disk_usage(const std::string& dir) {
  g_usage = 0;
  g_seen.clear();
  nftw(dir.c_str(), [](const char*, const struct stat* st, int, FTW*) {
    if (st->st_nlink < 2 || S_ISDIR(st->st_mode) || g_seen.insert({st->st_dev, st->st_ino}).second) {
      g_usage += static_cast<uint64_t>(st->st_blocks) * 512;
    }
    return 0;
  }, 64, FTW_PHYS | FTW_MOUNT);
  return g_usage;
}

std::string format(const char* fmt, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
std::string human_bytes(uint64_t b) { return format("%.1f MiB", static_cast<double>(b) / (1 << 20)); }
std::string human_seconds(double s) { return format("%.1f s", s); }
std::string utc_now() {
  char buf[32];
  time_t now = time(nullptr);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  return buf;
}
std::string random_hex() {
  std::random_device rd;
  char buf[24];
  snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- the host's apt sources --------------------------------------------------------------

struct AptSource {
  std::string uri, suite, components;
};

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Adds the "deb" entries of a sources file: one-line format (sources.list, *.list) or
// deb822 (*.sources), whose paragraphs end at a blank line.
void parse_sources(const std::string& text, bool deb822, std::vector<AptSource>* out) {
  std::istringstream in(text + "\n\n");
  std::map<std::string, std::string> f;
  for (std::string line; std::getline(in, line);) {
    if (deb822 && !line.empty() && line[0] == '#') continue;  // a comment does not end a paragraph
    line = line.substr(0, line.find('#'));
    std::vector<std::string> w = words(line);
    if (!deb822) {
      size_t i = 1;  // deb [options] URI SUITE COMPONENT...
      while (w.size() > i && w[1][0] == '[' && w[i - 1].back() != ']') ++i;
      if (w.size() < i + 2 || w[0] != "deb") continue;
      out->push_back({w[i], w[i + 1], join({w.begin() + i + 2, w.end()}, " ")});
    } else if (w.empty()) {
      std::vector<std::string> types = words(f["types"]);
      if (std::find(types.begin(), types.end(), "deb") != types.end() && f["enabled"] != "no") {
        for (const std::string& uri : words(f["uris"])) {
          for (const std::string& suite : words(f["suites"])) out->push_back({uri, suite, f["components"]});
        }
      }
      f.clear();
    } else if (line[0] != ' ' && line[0] != '\t' && line.find(':') != std::string::npos) {
      std::string key = line.substr(0, line.find(':'));
      std::transform(key.begin(), key.end(), key.begin(), ::tolower);
      f[key] = join(words(line.substr(line.find(':') + 1)), " ");
    }
  }
}

// The Debian sources apt uses on this host for our suite (bookworm, bookworm-updates,
// bookworm-security, ...), from sources.list and sources.list.d/*.{list,sources}.
std::vector<AptSource> host_apt_sources() {
  std::vector<AptSource> all, ours;
  parse_sources(read_file("/etc/apt/sources.list"), false, &all);
  const std::string dir = "/etc/apt/sources.list.d";
  int fd = open_dir(AT_FDCWD, dir);
  std::vector<std::string> names = fd >= 0 ? list_dir(fd) : std::vector<std::string>{};
  if (fd >= 0) close(fd);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const size_t dot = n.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : n.substr(dot);
    if (ext == ".list" || ext == ".sources") parse_sources(read_file(dir + "/" + n), ext == ".sources", &all);
  }
  for (AptSource& s : all) {
    if (s.components.empty()) s.components = "main";
    if (s.suite == kSuite || s.suite.rfind(std::string(kSuite) + "-", 0) == 0) ours.push_back(s);
  }
  return ours;
}

// ---- running one build step --------------------------------------------------------------

volatile sig_atomic_t g_signal = 0;
volatile pid_t g_step_pgid = 0;

void forward_signal(int sig) {
  g_signal = sig;
  pid_t pg = g_step_pgid;
  if (pg > 0) kill(-pg, SIGKILL);
}

// While a build runs, SIGINT/SIGTERM/SIGHUP end the running step (its whole process group),
// so the build fails through its normal path and removes its temp dirs.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_signal = 0;
    struct sigaction sa = {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalForwarding() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
};

Status interrupted() {
  return Status(ErrorCode::kInternal, std::string("interrupted (") + strsignal(g_signal) + ")");
}

struct Step {
  std::string tag;                 // "[python 2/3]"
  std::string what;                // "apt-get install", for errors
  std::vector<std::string> argv;   // argv[0] absolute (inside the chroot when there is one)
  std::string root;                // chroot here (empty: none)
  std::string overlay_options;     // mount an overlay at `root` first
  bool system_mounts = false;      // /proc /dev /sys, tmpfs /tmp /run, the host's resolv.conf
};

// Everything the child needs, prepared before fork: the child allocates nothing.
struct ChildPlan {
  struct Mount {
    std::string source, target, fstype, data;
    unsigned long flags;
    bool optional = false;  // a failure is not an error
  };
  std::vector<Mount> mounts;
  std::vector<std::string> strings;  // backing store for argv/envp
  std::vector<char*> argv, envp;
  std::string chroot;
};

ChildPlan plan_child(const Step& s) {
  ChildPlan c;
  const std::string& r = s.root;
  if (!s.overlay_options.empty()) c.mounts.push_back({"overlay", r, "overlay", s.overlay_options, 0});
  if (s.system_mounts) {
    c.mounts.push_back({"proc", r + "/proc", "proc", "", MS_NOSUID | MS_NODEV | MS_NOEXEC});
    c.mounts.push_back({"/dev", r + "/dev", "", "", MS_BIND | MS_REC});
    c.mounts.push_back({"/sys", r + "/sys", "", "", MS_BIND | MS_REC});
    c.mounts.push_back({"", r + "/sys", "", "", MS_REMOUNT | MS_BIND | MS_RDONLY, true});
    c.mounts.push_back({"tmpfs", r + "/tmp", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV});
    c.mounts.push_back({"tmpfs", r + "/run", "tmpfs", "mode=0755", MS_NOSUID | MS_NODEV});
    // apt needs DNS: the host's resolv.conf over the base's empty one (no copy-up happens).
    c.mounts.push_back({"/etc/resolv.conf", r + "/etc/resolv.conf", "", "", MS_BIND, true});
  }
  c.chroot = r;
  c.strings = s.argv;
  c.strings.insert(c.strings.end(), {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                                     "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", "DEBCONF_NONINTERACTIVE_SEEN=true"});
  for (const char* k : {"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}) {
    if (const char* v = getenv(k)) c.strings.push_back(std::string(k) + "=" + v);
  }
  for (size_t i = 0; i < c.strings.size(); ++i) (i < s.argv.size() ? c.argv : c.envp).push_back(c.strings[i].data());
  c.argv.push_back(nullptr);
  c.envp.push_back(nullptr);
  return c;
}

[[noreturn]] void child_fail(const char* step, const char* path) {
  dprintf(2, "corral: %s %s: %s\n", step, path, strerror(errno));
  _exit(127);
}

// The child: its own process group and a private mount namespace, so every mount it (or
// debootstrap) makes vanishes with it, even if it is killed.
[[noreturn]] void run_child(const ChildPlan& c, int out_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  if (unshare(CLONE_NEWNS) != 0) child_fail("unshare", "mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail("make private", "/");
  for (const ChildPlan::Mount& m : c.mounts) {
    auto str = [](const std::string& v) { return v.empty() ? nullptr : v.c_str(); };
    if (mount(str(m.source), m.target.c_str(), str(m.fstype), m.flags, str(m.data)) != 0 && !m.optional) {
      child_fail("mount", m.target.c_str());
    }
  }
  if (!c.chroot.empty() && (chroot(c.chroot.c_str()) != 0 || chdir("/") != 0)) child_fail("chroot", c.chroot.c_str());
  execve(c.argv[0], c.argv.data(), c.envp.data());
  child_fail("execve", c.argv[0]);
}

bool looks_like_network(const std::string& msg) {
  for (const char* p : {"Failed getting release", "Failed to fetch", "Temporary failure resolving", "Could not resolve",
                        "Unable to connect", "Connection failed", "Could not connect", "Network is unreachable",
                        "Couldn't download", "No route to host"}) {
    if (msg.find(p) != std::string::npos) return true;
  }
  return false;
}

// Runs one step, streaming its output (stdout and stderr, line by line) to `progress`.
Status run_step(const Step& s, const Progress& progress, const std::string& mirror) {
  if (g_signal) return interrupted();
  progress(s.tag + " " + s.what);
  const ChildPlan plan = plan_child(s);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return SysError(s.tag + " pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]), close(p[1]);
    return SysError(s.tag + " fork");
  }
  if (pid == 0) run_child(plan, p[1]);
  setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  g_step_pgid = pid;
  if (g_signal) kill(-pid, SIGKILL);
  close(p[1]);
  std::string buf, first_error, last_line;  // the first error line usually names the cause
  auto emit = [&](std::string line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) return;
    progress(s.tag + " " + line);
    last_line = line;
    for (const char* p : {"E: ", "W: Fail", "corral: ", "dpkg: error"}) {
      if (first_error.empty() && line.rfind(p, 0) == 0) first_error = line;
    }
  };
  char chunk[8192];
  while (true) {
    ssize_t n = read(p[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] == '\n' || chunk[i] == '\r') emit(std::move(buf)), buf.clear();
      else buf += chunk[i];
    }
  }
  emit(std::move(buf));
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_step_pgid = 0;
  if (g_signal) return interrupted();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string why = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                      : std::string("killed by ") + strsignal(WTERMSIG(status));
  std::string detail = first_error.empty() ? last_line : first_error;
  std::string msg = s.tag + " " + s.what + " failed (" + why + ")" + (detail.empty() ? "" : ": " + detail);
  if (looks_like_network(detail)) msg += " [network: is " + mirror + " reachable?]";
  return Status(ErrorCode::kInternal, msg);
}

// ---- layer metadata ----------------------------------------------------------------------

nlohmann::json read_meta(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string meta_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
uint64_t meta_bytes(const nlohmann::json& j) {
  auto it = j.find("bytes");
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// Puts the finished `tmp` at `final` (swapping out and deleting any previous build there:
// the path stays valid throughout, so a registered rootfs never points at nothing).
Status install_dir(const std::string& tmp, const std::string& final) {
  if (rename(tmp.c_str(), final.c_str()) == 0) return Status::Ok();
  if (errno != EEXIST && errno != ENOTEMPTY) return SysError("install layer", final);
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final.c_str(), RENAME_EXCHANGE) != 0) {
    return SysError("replace layer", final);
  }
  remove_tree(tmp);  // the previous build
  return Status::Ok();
}

// ---- the base layer ----------------------------------------------------------------------

std::string sources_list_for(const std::vector<AptSource>& host, const std::string& host_mirror, const std::string& mirror) {
  std::string out;
  for (const AptSource& s : host) {
    out += "deb " + (s.uri == host_mirror ? mirror : s.uri) + " " + s.suite + " " + s.components + "\n";
  }
  if (out.empty()) out = "deb " + mirror + " " + kSuite + " main\n";
  return out;
}

// Turns a fresh debootstrap into the shared base: apt pointed at the host's mirrors, slim
// dpkg/apt config, caches/lists/docs removed, a sandbox user, and files a sandbox expects.
Status configure_base(const std::string& root, const std::string& sources_list) {
  RETURN_IF_ERROR(write_file(root + "/etc/apt/sources.list", sources_list));
  RETURN_IF_ERROR(write_file(root + "/etc/apt/apt.conf.d/90corral", kAptConf));
  RETURN_IF_ERROR(write_file(root + "/etc/dpkg/dpkg.cfg.d/90corral-slim", kDpkgSlim));
  RETURN_IF_ERROR(write_file(root + "/usr/sbin/policy-rc.d", kPolicyRcd, 0755));
  auto all = [](const std::string&) { return true; };
  prune_files(root + "/usr/share/doc", [](const std::string& n) { return n != "copyright"; }, true);
  prune_files(root + "/usr/share/locale", [](const std::string& n) { return n != "locale.alias"; }, true);
  prune_files(root + "/usr/share/man", all, false);
  prune_files(root + "/usr/share/info", all, false);
  prune_files(root + "/usr/share/lintian", all, false);
  prune_files(root + "/var/cache/apt", all, false);
  prune_files(root + "/var/lib/apt/lists", [](const std::string& n) { return n != "lock"; }, false);
  unlink((root + "/var/log/bootstrap.log").c_str());
  // The sandbox runs as uid 1000; give it a name and a home.
  std::string passwd = read_file(root + "/etc/passwd");
  if (passwd.find(":x:1000:") == std::string::npos) {
    RETURN_IF_ERROR(write_file(root + "/etc/passwd", passwd + "sandbox:x:1000:1000:sandbox:/sandbox:/bin/sh\n"));
  }
  std::string group = read_file(root + "/etc/group");
  if (group.find(":x:1000:") == std::string::npos) {
    RETURN_IF_ERROR(write_file(root + "/etc/group", group + "sandbox:x:1000:\n"));
  }
  RETURN_IF_ERROR(write_file(root + "/etc/hostname", "corral\n"));
  RETURN_IF_ERROR(write_file(root + "/etc/hosts", "127.0.0.1\tlocalhost corral\n::1\tlocalhost ip6-localhost ip6-loopback\n"));
  unlink((root + "/etc/resolv.conf").c_str());  // sandboxes have no DNS; builds bind the host's
  RETURN_IF_ERROR(write_file(root + "/etc/resolv.conf", ""));
  // Host-root-owned directories cannot be copied up inside a sandbox: scratch space that
  // programs expect under /var/tmp lives on the sandbox's /tmp (as in host mode).
  const std::string vartmp = root + "/var/tmp";
  if (is_dir(vartmp) && rmdir(vartmp.c_str()) == 0 && symlink("../tmp", vartmp.c_str()) != 0) {
    return SysError("symlink", vartmp);
  }
  return Status::Ok();
}

struct LayerInfo {
  std::string dir;
  std::string build_id;
  uint64_t bytes = 0;
  bool cached = false;
  double seconds = 0;
};

StatusOr<LayerInfo> ensure_base(const std::string& layers, const BuildOptions& opts, const Progress& progress) {
  LayerInfo info;
  info.dir = layers + "/" + kBaseLayer;
  const std::string meta_path = info.dir + ".json";
  nlohmann::json meta = read_meta(meta_path);
  info.build_id = meta_string(meta, "build_id");
  if (!opts.rebuild_base && is_dir(info.dir) && !info.build_id.empty()) {
    info.cached = true;
    info.bytes = meta_bytes(meta);
    progress("[base] using cached " + std::string(kBaseLayer) + " (" + human_bytes(info.bytes) + ")");
    return info;
  }
  std::string debootstrap;
  for (const char* p : {"/usr/sbin/debootstrap", "/usr/bin/debootstrap", "/sbin/debootstrap", "/bin/debootstrap"}) {
    if (debootstrap.empty() && access(p, X_OK) == 0) debootstrap = p;
  }
  if (debootstrap.empty()) {
    return Unsupported("debootstrap is not installed: it builds the base layer (apt-get install debootstrap)");
  }
  std::vector<AptSource> host = host_apt_sources();
  auto main_suite = std::find_if(host.begin(), host.end(), [](const AptSource& s) { return s.suite == kSuite; });
  const std::string host_mirror = main_suite != host.end() ? main_suite->uri : kDefaultMirror;
  const std::string mirror = opts.mirror.empty() ? host_mirror : opts.mirror;
  const auto t0 = Clock::now();
  const std::string tmp = layers + "/.tmp-base-" + random_hex();
  if (mkdir(tmp.c_str(), 0755) != 0 || chmod(tmp.c_str(), 0755) != 0) return SysError("create temp dir", tmp);
  Step s{"[base 1/2]", "debootstrap --variant=minbase " + std::string(kSuite) + " from " + mirror,
         {debootstrap, "--variant=minbase", kSuite, tmp, mirror}, "", "", false};  // it chroots by itself
  Status st = run_step(s, progress, mirror);
  if (st.ok()) {
    progress("[base 2/2] configure apt and dpkg, remove apt caches, lists, docs, man pages, translations");
    st = configure_base(tmp, sources_list_for(host, host_mirror, mirror));
  }
  if (st.ok() && g_signal) st = interrupted();
  if (!st.ok()) {
    remove_tree(tmp);
    return st;
  }
  info.bytes = disk_usage(tmp);
  info.build_id = random_hex();
  info.seconds = seconds_since(t0);
  unlink(meta_path.c_str());  // a layer without metadata is rebuilt, never trusted
  st = install_dir(tmp, info.dir);
  if (!st.ok()) {
    remove_tree(tmp);
    return st;
  }
  nlohmann::json j = {{"layer", kBaseLayer}, {"build_id", info.build_id}, {"suite", kSuite},
                      {"variant", "minbase"}, {"mirror", mirror}, {"built", utc_now()},
                      {"seconds", info.seconds}, {"bytes", info.bytes}};
  RETURN_IF_ERROR(write_file(meta_path, j.dump(2) + "\n"));
  progress("[base] built " + std::string(kBaseLayer) + ": " + human_bytes(info.bytes) + " in " + human_seconds(info.seconds));
  return info;
}

// ---- the language layer ------------------------------------------------------------------

// Packages with "install ok installed" in the base's dpkg status.
std::set<std::string> installed_packages(const std::string& root) {
  std::set<std::string> out;
  std::istringstream in(read_file(root + "/var/lib/dpkg/status"));
  std::string pkg;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Package: ", 0) == 0) pkg = line.substr(9);
    if (line == "Status: install ok installed" && !pkg.empty()) out.insert(pkg);
    if (line.empty()) pkg.clear();
  }
  return out;
}

// Overlay marks a directory that replaced a lower one as opaque with a trusted.* xattr,
// which an overlay mounted inside a user namespace (every sandbox) cannot read. Turn each
// into the equivalent explicit whiteouts, which every overlay honours.
Status whiteout_lower_entries(const std::string& upper, const std::string& lower, int* count) {
  int lfd = open_dir(AT_FDCWD, lower);
  if (lfd < 0) return Status::Ok();  // nothing below to hide
  std::vector<std::string> names = list_dir(lfd);
  close(lfd);
  for (const std::string& n : names) {
    const std::string u = upper + "/" + n, l = lower + "/" + n;
    struct stat ust;
    if (lstat(u.c_str(), &ust) != 0) {
      if (mknod(u.c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0) return SysError("create whiteout", u);
    } else if (S_ISDIR(ust.st_mode) && is_dir(l)) {
      lremovexattr(u.c_str(), "trusted.overlay.opaque");
      RETURN_IF_ERROR(whiteout_lower_entries(u, l, count));
    }
  }
  ++*count;
  return Status::Ok();
}

Status make_explicit(const std::string& upper, const std::string& lower, int* count) {
  char v[8];
  ssize_t n = lgetxattr(upper.c_str(), "trusted.overlay.opaque", v, sizeof v);
  if (n > 0 && v[0] == 'y') {
    RETURN_IF_ERROR(whiteout_lower_entries(upper, lower, count));
    if (lremovexattr(upper.c_str(), "trusted.overlay.opaque") != 0) return SysError("remove opaque xattr", upper);
    return Status::Ok();
  }
  int fd = open_dir(AT_FDCWD, upper);
  if (fd < 0) return SysError("open", upper);
  std::vector<std::string> names = list_dir(fd);
  for (const std::string& name : names) {
    struct stat st;
    if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
      Status s = make_explicit(upper + "/" + name, lower + "/" + name, count);
      if (!s.ok()) return close(fd), s;
    }
  }
  close(fd);
  return Status::Ok();
}

// What apt leaves behind that a sandbox never needs: removed from the upper dir directly
// (the overlay is gone by now), so no whiteouts appear and the base's copies show through.
void clean_upper(const std::string& upper) {
  auto all = [](const std::string&) { return true; };
  prune_files(upper + "/var/lib/apt/lists", all, false);
  prune_files(upper + "/var/cache/apt", all, false);
  prune_files(upper + "/var/log", all, false);
  prune_files(upper + "/var/cache/debconf", [](const std::string& n) {
    return n.size() > 4 && n.compare(n.size() - 4, 4, "-old") == 0;
  }, false);
}

StatusOr<LayerInfo> build_lang_layer(const std::string& lang, const std::vector<std::string>& packages,
                                     const std::string& layers, const LayerInfo& base, const Progress& progress) {
  LayerInfo info;
  info.dir = layers + "/" + lang + "-" + kLangLayerVersion;
  const auto t0 = Clock::now();
  const std::string tmp = layers + "/.tmp-" + lang + "-" + random_hex();
  const std::string upper = tmp + "/upper", work = tmp + "/work", merged = tmp + "/merged";
  for (const std::string& d : {tmp, upper, work, merged}) {
    if (mkdir(d.c_str(), 0755) != 0 || chmod(d.c_str(), 0755) != 0) {
      Status st = SysError("create temp dir", d);
      remove_tree(tmp);
      return st;
    }
  }
  const std::set<std::string> have = installed_packages(base.dir);
  const bool all_in_base = std::all_of(packages.begin(), packages.end(), [&](const std::string& p) { return have.count(p); });
  const std::string pkgs = " " + join(packages, " ");
  const std::string mirror = meta_string(read_meta(base.dir + ".json"), "mirror");
  Status st;
  if (all_in_base) {
    progress("[" + lang + " 1/1] " + pkgs.substr(1) + ": already in the base, the layer stays empty");
  } else {
    const std::string opts = "lowerdir=" + base.dir + ",upperdir=" + upper + ",workdir=" + work +
                             ",index=off,redirect_dir=off,metacopy=off";
    const std::string t = "[" + lang + " ";
    Step update{t + "1/3]", "apt-get update", {"/usr/bin/apt-get", "-q", "-o", "APT::Update::Error-Mode=any", "update"},
                merged, opts, true};
    Step install{t + "2/3]", "apt-get install" + pkgs, {"/usr/bin/apt-get", "-q", "-y", "--no-install-recommends", "install"},
                 merged, opts, true};
    install.argv.insert(install.argv.end(), packages.begin(), packages.end());
    st = run_step(update, progress, mirror);
    if (st.ok()) st = run_step(install, progress, mirror);
    if (st.ok()) {
      progress(t + "3/3] remove apt lists, caches and logs; opaque directories to whiteouts");
      clean_upper(upper);
      int opaque = 0;
      st = make_explicit(upper, base.dir, &opaque);
      if (st.ok() && opaque > 0) progress(t + "3/3] " + std::to_string(opaque) + " opaque directories made explicit");
    }
  }
  if (st.ok() && g_signal) st = interrupted();
  if (st.ok()) {
    info.bytes = disk_usage(upper);
    info.seconds = seconds_since(t0);
    unlink((info.dir + ".json").c_str());
    st = install_dir(upper, info.dir);
  }
  remove_tree(tmp);
  if (!st.ok()) return st;
  return info;
}

// Other languages whose layer sits on a different build of the base than the current one.
std::vector<std::string> stale_languages(const std::string& layers, const std::string& base_build_id) {
  std::vector<std::string> out;
  for (const Recipe& r : recipes()) {
    const std::string dir = layers + "/" + r.lang + "-" + kLangLayerVersion;
    if (!is_dir(dir)) continue;
    if (meta_string(read_meta(dir + ".json"), "base_build_id") != base_build_id) out.push_back(r.lang);
  }
  return out;
}

}  // namespace

std::vector<std::string> buildable_languages() {
  std::vector<std::string> out;
  for (const Recipe& r : recipes()) out.push_back(r.lang);
  return out;
}

std::vector<std::string> language_packages(const std::string& lang) {
  for (const Recipe& r : recipes()) {
    if (lang == r.lang) return {r.packages.begin(), r.packages.end()};
  }
  return {};
}

StatusOr<Rootfs> build_language_rootfs(const std::string& lang, const std::string& rootfs_dir,
                                       const BuildOptions& opts, const Progress& progress) {
  const std::vector<std::string> packages = language_packages(lang);
  if (packages.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  "unknown language '" + lang + "' (buildable: " + join(buildable_languages(), ", ") + ")", "lang");
  }
  if (rootfs_dir.empty() || rootfs_dir[0] != '/') return InvalidArgument("rootfs_dir", "must be an absolute path");
  if (geteuid() != 0) {
    return Status(ErrorCode::kPermissionDenied, "building a rootfs needs root (debootstrap, mounts, chroot)");
  }
  // One build per process at a time (the signal forwarding is process-wide); the flock below
  // serialises builds across processes.
  static std::mutex build_mutex;
  std::lock_guard<std::mutex> one_at_a_time(build_mutex);
  const auto t0 = Clock::now();
  const std::string layers = rootfs_dir + "/layers";
  for (const std::string& d : {rootfs_dir, layers}) {
    if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create directory", d);
  }
  SignalForwarding signals;
  // Not close-on-exec: every step's processes hold the lock too, so a build whose parent
  // was killed keeps the next one out until its last straggler has exited.
  const std::string lock_path = layers + "/.build.lock";
  int lock = open(lock_path.c_str(), O_RDWR | O_CREAT, 0644);
  if (lock < 0) return SysError("open build lock", lock_path);
  struct LockCloser {
    int fd;
    ~LockCloser() { close(fd); }
  } closer{lock};
  if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    progress("[lock] another build holds " + lock_path + "; waiting");
    while (flock(lock, LOCK_EX) != 0) {
      if (errno != EINTR) return SysError("lock", lock_path);
      if (g_signal) return interrupted();
    }
  }
  // Leftovers of a build that was killed (we hold the lock: nobody is using them).
  int lfd = open_dir(AT_FDCWD, layers);
  if (lfd >= 0) {
    for (const std::string& n : list_dir(lfd)) {
      if (n.rfind(".tmp-", 0) == 0) {
        progress("[cleanup] removing " + n + " left by an interrupted build");
        remove_tree(layers + "/" + n);
      }
    }
    close(lfd);
  }

  ASSIGN_OR_RETURN(LayerInfo base, ensure_base(layers, opts, progress));
  LayerInfo layer;
  layer.dir = layers + "/" + lang + "-" + kLangLayerVersion;
  const std::string meta_path = layer.dir + ".json";
  nlohmann::json meta = read_meta(meta_path);
  const bool current = is_dir(layer.dir) && meta_string(meta, "base") == kBaseLayer &&
                       meta_string(meta, "base_build_id") == base.build_id &&
                       meta.value("packages", nlohmann::json()) == packages;
  if (current && !opts.rebuild && !opts.rebuild_base) {
    layer.cached = true;
    layer.bytes = meta_bytes(meta);
  } else {
    if (is_dir(layer.dir) && !opts.rebuild && !opts.rebuild_base) {
      progress("[" + lang + "] cached layer is out of date (base or packages changed); rebuilding");
    }
    ASSIGN_OR_RETURN(layer, build_lang_layer(lang, packages, layers, base, progress));
    nlohmann::json j = {{"layer", lang + "-" + kLangLayerVersion}, {"lang", lang}, {"packages", packages},
                        {"base", kBaseLayer}, {"base_build_id", base.build_id}, {"built", utc_now()},
                        {"seconds", layer.seconds}, {"bytes", layer.bytes}};
    RETURN_IF_ERROR(write_file(meta_path, j.dump(2) + "\n"));
  }

  Rootfs r;
  r.name = lang;
  r.source = "debootstrap:" + lang;
  r.layers = {layer.dir, base.dir};
  auto registered = resolve_rootfs(lang, rootfs_dir);
  const bool same = registered.ok() && registered->layers == r.layers && registered->source == r.source;
  if (!same || !layer.cached) RETURN_IF_ERROR(register_rootfs(r, rootfs_dir));
  if (g_signal) return interrupted();

  if (layer.cached && base.cached) {
    progress("[cache] " + lang + ": cache hit, layers " + lang + "-" + kLangLayerVersion + " and " + kBaseLayer +
             " are current (--rebuild to rebuild)");
  }
  auto describe = [](const LayerInfo& l) {
    return human_bytes(l.bytes) + (l.cached ? " (cached)" : " (built in " + human_seconds(l.seconds) + ")");
  };
  progress("[done] rootfs '" + lang + "': layer " + lang + "-" + kLangLayerVersion + " " + describe(layer) + " + base " +
           kBaseLayer + " " + describe(base) + " = " + human_bytes(layer.bytes + base.bytes) + " in " +
           human_seconds(seconds_since(t0)) + (same && layer.cached ? "" : "; registered"));
  const std::string stale = base.cached ? "" : join(stale_languages(layers, base.build_id), ", ");
  if (!stale.empty()) progress("[note] built on the previous base, rebuild with `corral rootfs build LANG`: " + stale);
  return r;
}

}  // namespace corral::rootfs
