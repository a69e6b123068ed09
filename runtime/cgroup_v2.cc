// cgroup v2: one directory per sandbox, <own>/corral/<id>, entered at clone time
// (CLONE_INTO_CGROUP), with memory.max + swap 0 + oom.group, pids.max and cpu.max.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <sstream>

#include "runtime/cgroup_drivers.h"

namespace corral::runtime {
namespace {

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

class V2SandboxCgroup : public SandboxCgroup {
 public:
  V2SandboxCgroup(std::string id, std::string dir) : SandboxCgroup(std::move(id)), dir_(std::move(dir)) {}
  ~V2SandboxCgroup() override { close_fds(); }

  Status configure(const Limits& l, bool has_cpu) {
    RETURN_IF_ERROR(write_cgroup_file(dir_ + "/memory.max", std::to_string(l.memory_bytes)));
    if (exists(dir_ + "/memory.swap.max")) RETURN_IF_ERROR(write_cgroup_file(dir_ + "/memory.swap.max", "0"));
    // The OOM killer takes the whole sandbox's exec, not one process of it. corral-init is
    // exempt (oom_score_adj -1000, set by the supervisor) so the sandbox itself survives.
    RETURN_IF_ERROR(write_cgroup_file(dir_ + "/memory.oom.group", "1"));
    RETURN_IF_ERROR(write_cgroup_file(dir_ + "/pids.max", std::to_string(l.pids)));
    if (l.cpu > 0) {
      if (!has_cpu) return Unsupported("the cpu controller is not delegated to corral's cgroup", "limits.cpu");
      long quota = std::lround(l.cpu * 100000);
      RETURN_IF_ERROR(write_cgroup_file(dir_ + "/cpu.max", std::to_string(quota) + " 100000"));
    }
    dir_fd_ = open(dir_.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (dir_fd_ < 0) return SysError("open cgroup", dir_);
    events_fd_ = open((dir_ + "/memory.events").c_str(), O_RDONLY | O_CLOEXEC);
    // memory.peak is reset per open file (kernel 6.12+): reset and read through one fd.
    peak_fd_ = open((dir_ + "/memory.peak").c_str(), O_RDWR | O_CLOEXEC);
    return Status::Ok();
  }

  int clone_into_fd() const override { return dir_fd_; }
  std::vector<std::string> attach_files() const override { return {dir_ + "/cgroup.procs"}; }

  StatusOr<CgroupCounters> read() override {
    CgroupCounters c;
    auto cpu = read_cgroup_file(dir_ + "/cpu.stat");
    if (!cpu.ok()) return cpu.status();
    c.cpu_user_us = cgroup_stat_value(*cpu, "user_usec");
    c.cpu_sys_us = cgroup_stat_value(*cpu, "system_usec");
    if (peak_fd_ >= 0) {
      char buf[64] = {};
      if (pread(peak_fd_, buf, sizeof buf - 1, 0) > 0) c.peak_memory_bytes = std::stoull(buf);
    }
    if (events_fd_ >= 0) {
      char buf[512] = {};
      // Reading through the polled fd also re-arms its POLLPRI notification.
      if (pread(events_fd_, buf, sizeof buf - 1, 0) > 0) c.oom_kills = cgroup_stat_value(buf, "oom_kill");
    }
    auto pids = read_cgroup_file(dir_ + "/pids.events");
    if (pids.ok()) c.pids_refused = cgroup_stat_value(*pids, "max");
    return c;
  }

  Status reset_peak() override {
    if (peak_fd_ < 0) return Status::Ok();
    if (pwrite(peak_fd_, "0", 1, 0) != 1) {
      // Kernels before 6.12 cannot reset: the peak then covers the sandbox's whole life.
      close(peak_fd_);
      peak_fd_ = open((dir_ + "/memory.peak").c_str(), O_RDONLY | O_CLOEXEC);
    }
    return Status::Ok();
  }

  int oom_fd() const override { return events_fd_; }
  short oom_poll_events() const override { return POLLPRI; }

  Status kill_all() override {
    if (write_cgroup_file(dir_ + "/cgroup.kill", "1").ok()) return Status::Ok();
    // Before 5.14: no forks (pids.max 0), then kill what is listed.
    write_cgroup_file(dir_ + "/pids.max", "0");
    kill_cgroup_processes(dir_);
    return Status::Ok();
  }

  Status remove() override {
    close_fds();
    if (rmdir(dir_.c_str()) != 0 && errno != ENOENT) return SysError("remove cgroup", dir_);
    return Status::Ok();
  }

 private:
  void close_fds() {
    for (int* fd : {&dir_fd_, &events_fd_, &peak_fd_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  std::string dir_;
  int dir_fd_ = -1;
  int events_fd_ = -1;
  int peak_fd_ = -1;
};

class V2Driver : public CgroupDriver {
 public:
  V2Driver(std::string subtree, bool has_cpu) : subtree_(std::move(subtree)), has_cpu_(has_cpu) {}
  const char* name() const override { return "v2"; }
  bool clone_into() const override { return true; }
  std::vector<std::string> subtree_dirs() const override { return {subtree_}; }

  StatusOr<std::unique_ptr<SandboxCgroup>> create(const std::string& id, const Limits& limits) override {
    std::string dir = subtree_ + "/" + id;
    if (mkdir_sandbox_cgroup(dir) != 0) return SysError("create cgroup", dir);
    auto cg = std::make_unique<V2SandboxCgroup>(id, dir);
    Status s = cg->configure(limits, has_cpu_);
    if (!s.ok()) {
      cg->remove();
      return s;
    }
    return std::unique_ptr<SandboxCgroup>(std::move(cg));
  }

 private:
  std::string subtree_;
  bool has_cpu_;
};

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// Enables the controllers corral needs for the children of `dir`.
Status delegate(const std::string& dir, bool cpu) {
  std::string want = "+memory +pids";
  if (cpu) want += " +cpu";
  return write_cgroup_file(dir + "/cgroup.subtree_control", want);
}

}  // namespace

StatusOr<std::unique_ptr<CgroupDriver>> make_v2_driver(const CgroupLayout& layout) {
  const std::string& own = layout.v2_own;
  // Started by another corral process (a test runner, a server spawning the CLI): this
  // process sits in that one's supervisor leaf, <delegated>/corral/supervisor-<pid>. The
  // corral subtree above is already delegated and is this installation's own; share it and
  // take a sibling leaf instead of nesting a second subtree (impossible anyway: the leaf
  // holds the other supervisor's processes).
  const std::string parent = own.substr(0, own.rfind('/'));
  if (own.compare(own.rfind('/') + 1, 11, "supervisor-") == 0 && parent.size() > 7 &&
      parent.compare(parent.size() - 7, 7, "/corral") == 0) {
    auto controllers = read_cgroup_file(parent + "/cgroup.subtree_control");
    if (controllers.ok() && has_word(*controllers, "memory") && has_word(*controllers, "pids")) {
      std::string leaf = parent + "/supervisor-" + std::to_string(getpid());
      if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create supervisor cgroup", leaf);
      RETURN_IF_ERROR(write_cgroup_file(leaf + "/cgroup.procs", std::to_string(getpid())));
      return std::unique_ptr<CgroupDriver>(new V2Driver(parent, has_word(*controllers, "cpu")));
    }
  }
  auto controllers = read_cgroup_file(own + "/cgroup.controllers");
  if (!controllers.ok()) return controllers.status();
  const bool cpu = has_word(*controllers, "cpu");
  const std::string subtree = own + "/corral";
  if (mkdir(subtree.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create corral cgroup subtree", subtree);

  // No internal processes: own may delegate controllers only while no process lives in it
  // directly (the root cgroup is exempt). If corral itself is what lives there, it moves
  // into a leaf of its own subtree; anyone else living there is not corral's to move.
  Status s = delegate(own, cpu);
  if (!s.ok() && s.sys_errno() == EBUSY) {
    std::string leaf = subtree + "/supervisor-" + std::to_string(getpid());
    if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create supervisor cgroup", leaf);
    RETURN_IF_ERROR(write_cgroup_file(leaf + "/cgroup.procs", std::to_string(getpid())));
    s = delegate(own, cpu);
    if (!s.ok() && s.sys_errno() == EBUSY) {
      return Status(ErrorCode::kUnsupported,
                    "cannot delegate controllers: other processes live in corral's own cgroup " + own +
                        " (run corral in a cgroup of its own, e.g. a systemd service with Delegate=yes)",
                    own, EBUSY);
    }
  }
  RETURN_IF_ERROR(s);
  RETURN_IF_ERROR(delegate(subtree, cpu));
  return std::unique_ptr<CgroupDriver>(new V2Driver(subtree, cpu));
}

}  // namespace corral::runtime
