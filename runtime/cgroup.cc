#include "runtime/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/cgroup_drivers.h"

namespace corral::runtime {

Status write_cgroup_file(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open cgroup file", path);
  ssize_t w = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (w != static_cast<ssize_t>(value.size())) return SysError("write '" + value + "' to", w < 0 ? err : EIO, path);
  return Status::Ok();
}

StatusOr<std::string> read_cgroup_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open cgroup file", path);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int err = errno;
  close(fd);
  if (n < 0) return SysError("read cgroup file", err, path);
  return out;
}

uint64_t cgroup_stat_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

namespace {

// Splits `text` at `sep`, calling f(piece) for each piece (empty ones included).
template <typename F>
void for_each_piece(std::string_view text, char sep, F f) {
  while (true) {
    size_t at = text.find(sep);
    f(text.substr(0, at));
    if (at == std::string_view::npos) return;
    text.remove_prefix(at + 1);
  }
}

// The next space-separated field of `line`, consumed.
std::string_view next_field(std::string_view* line) {
  size_t b = line->find_first_not_of(' ');
  if (b == std::string_view::npos) return *line = {}, std::string_view();
  line->remove_prefix(b);
  size_t e = line->find(' ');
  std::string_view f = line->substr(0, e);
  line->remove_prefix(e == std::string_view::npos ? line->size() : e);
  return f;
}

}  // namespace

// Plain reads and string_view parsing: this runs on every CLI start, where iostreams'
// first use alone costs a noticeable share of a sandbox's start-up.
CgroupLayout read_cgroup_layout() {
  CgroupLayout layout;
  // Which cgroup this process is in, per hierarchy.
  std::map<std::string, std::string, std::less<>> own_by_controller;  // "memory" -> "/a/b", "" -> v2 path
  auto self = read_cgroup_file("/proc/self/cgroup");
  if (self.ok()) {
    for_each_piece(*self, '\n', [&](std::string_view line) {
      size_t a = line.find(':');
      size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
      if (b == std::string_view::npos) return;
      std::string_view controllers = line.substr(a + 1, b - a - 1);
      std::string path(line.substr(b + 1));
      if (controllers.empty()) {
        own_by_controller[""] = path;
        return;
      }
      for_each_piece(controllers, ',', [&](std::string_view c) { own_by_controller[std::string(c)] = path; });
    });
  }
  // Where each hierarchy is mounted, and which part of it the mount shows (a container's
  // cgroup mount often shows only its own subtree).
  auto mountinfo = read_cgroup_file("/proc/self/mountinfo");
  if (!mountinfo.ok()) return layout;
  for_each_piece(*mountinfo, '\n', [&](std::string_view line) {
    size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) return;
    std::string_view pre = line.substr(0, dash), post = line.substr(dash + 3);
    next_field(&pre);  // mount id
    next_field(&pre);  // parent id
    next_field(&pre);  // major:minor
    const std::string root(next_field(&pre));
    const std::string point(next_field(&pre));
    std::string_view fstype = next_field(&post);
    next_field(&post);  // source
    std::string_view opts = next_field(&post);
    auto own_dir = [&](const std::string& own) -> std::string {
      if (own.rfind(root, 0) != 0) return {};  // our cgroup is outside what this mount shows
      std::string rel = root == "/" ? own : own.substr(root.size());
      return rel == "/" || rel.empty() ? point : point + rel;
    };
    if (fstype == "cgroup2" && layout.v2_mount.empty() && own_by_controller.count("")) {
      layout.v2_mount = point;
      layout.v2_own = own_dir(own_by_controller.find("")->second);
    } else if (fstype == "cgroup") {
      for_each_piece(opts, ',', [&](std::string_view opt) {
        std::string o(opt);
        auto own = own_by_controller.find(o);
        if (kV1Controllers.count(o) && own != own_by_controller.end() && !layout.v1_own.count(o)) {
          std::string dir = own_dir(own->second);
          if (!dir.empty()) layout.v1_own[o] = dir;
        }
      });
    }
  });
  return layout;
}

namespace {

CgroupPlan plan_for(const CgroupLayout& layout) {
  std::string v1;
  for (const auto& [ctl, dir] : layout.v1_own) v1 += (v1.empty() ? "" : ", ") + ctl + " at " + dir;
  std::string v2_controllers = "-";
  if (!layout.v2_own.empty()) {
    auto ctl = read_cgroup_file(layout.v2_own + "/cgroup.controllers");
    if (ctl.ok()) v2_controllers = ctl->empty() ? "none" : ctl->substr(0, ctl->find_last_not_of("\n") + 1);
  }
  std::string seen = "v2 " + (layout.v2_own.empty() ? std::string("not mounted") : layout.v2_own + " offers: " + v2_controllers) +
                     "; v1: " + (v1.empty() ? std::string("none") : v1);
  // v2 when the unified hierarchy holds the controllers for our cgroup; otherwise v1.
  auto has = [&](const char* c) { return (" " + v2_controllers + " ").find(std::string(" ") + c + " ") != std::string::npos; };
  if (has("memory") && has("pids")) return {"v2", seen};
  if (layout.v1_own.count("memory") && layout.v1_own.count("pids")) return {"v1", seen};
  return {"", seen};
}

}  // namespace

CgroupPlan plan_cgroups() { return plan_for(read_cgroup_layout()); }

StatusOr<std::unique_ptr<CgroupDriver>> CgroupDriver::detect() {
  const CgroupLayout layout = read_cgroup_layout();
  CgroupPlan plan = plan_for(layout);
  if (plan.driver == "v2") return make_v2_driver(layout);
  if (plan.driver == "v1") return make_v1_driver(layout);
  return Unsupported("no usable cgroup controllers: neither cgroup v2 nor v1 offers both memory and pids to this "
                     "process (" + plan.detail + ")");
}

bool sandbox_owner_gone(const std::string& state_dir, const std::string& sandbox_id) {
  // Ids look like n<pid>-<slot>-<counter>; the slot's lock is held while the sandbox lives.
  unsigned pid, slot;
  unsigned long long counter;
  if (sscanf(sandbox_id.c_str(), "n%u-%u-%llu", &pid, &slot, &counter) != 3) return false;
  std::string lock = state_dir + "/uids/" + std::to_string(slot);
  int fd = open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  bool gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);  // releases the probe lock
  return gone;
}

StatusOr<int> CgroupDriver::remove_stale(const std::string& state_dir) {
  int removed = 0;
  for (const std::string& dir : subtree_dirs()) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      if (e->d_type == DT_DIR && e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
    for (const std::string& name : names) {
      std::string path = dir + "/" + name;
      bool stale = false;
      unsigned pid;
      if (sscanf(name.c_str(), "supervisor-%u", &pid) == 1) {
        stale = pid != static_cast<unsigned>(getpid()) && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
      } else {
        stale = sandbox_owner_gone(state_dir, name);
      }
      if (!stale) continue;
      write_cgroup_file(path + "/pids.max", "0");  // exists in the pids hierarchy only
      kill_cgroup_processes(path);
      // A killed task leaves cgroup.procs before it has finished exiting; until then (and,
      // on v1 memory, while its pages are uncharged) the directory is busy.
      int r;
      for (int attempt = 0; (r = rmdir(path.c_str())) != 0 && errno == EBUSY && attempt < 100; ++attempt) {
        usleep(2000);
      }
      if (r == 0) ++removed;
    }
  }
  return removed;
}

int mkdir_sandbox_cgroup(const std::string& dir) {
  // Another corral process sharing the subtree removes it whenever it empties (see
  // remove_subtree_if_empty): put it back and try again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (mkdir(dir.c_str(), 0755) == 0) return 0;
    if (errno != ENOENT) return -1;
    std::string subtree = dir.substr(0, dir.rfind('/'));
    if (mkdir(subtree.c_str(), 0755) != 0 && errno != EEXIST) return -1;
  }
  errno = ENOENT;
  return -1;
}

void CgroupDriver::remove_subtree_if_empty() {
  for (const std::string& dir : subtree_dirs()) rmdir(dir.c_str());  // EBUSY while in use
}

void kill_cgroup_processes(const std::string& dir) {
  // Repeat: a process may fork between reading the list and the kill.
  for (int round = 0; round < 100; ++round) {
    auto procs = read_cgroup_file(dir + "/cgroup.procs");
    if (!procs.ok() || procs->empty()) return;
    std::istringstream in(*procs);
    pid_t pid;
    while (in >> pid) kill(pid, SIGKILL);
    usleep(1000);
  }
}

}  // namespace corral::runtime
