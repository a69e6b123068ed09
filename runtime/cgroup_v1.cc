// cgroup v1: one directory per hierarchy (memory, pids, cpuacct, and cpu when a CPU cap is
// asked for), all named <own>/corral/<id>. Used on legacy hosts and on hybrid ones, where a
// cgroup2 tree is mounted but the controllers live on v1.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "runtime/cgroup_drivers.h"

namespace corral::runtime {
namespace {

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

class V1SandboxCgroup : public SandboxCgroup {
 public:
  V1SandboxCgroup(std::string id, std::map<std::string, std::string> dirs)
      : SandboxCgroup(std::move(id)), dirs_(std::move(dirs)) {}
  ~V1SandboxCgroup() override { close_fds(); }

  Status configure(const Limits& l) {
    const std::string& mem = dirs_.at("memory");
    RETURN_IF_ERROR(write_cgroup_file(mem + "/memory.limit_in_bytes", std::to_string(l.memory_bytes)));
    // memsw (memory + swap) equal to memory: no swap at all. Without swap accounting, at
    // least make the cgroup avoid swapping.
    if (exists(mem + "/memory.memsw.limit_in_bytes")) {
      RETURN_IF_ERROR(write_cgroup_file(mem + "/memory.memsw.limit_in_bytes", std::to_string(l.memory_bytes)));
    } else {
      write_cgroup_file(mem + "/memory.swappiness", "0");  // refused on some kernels; best effort
    }
    RETURN_IF_ERROR(write_cgroup_file(dirs_.at("pids") + "/pids.max", std::to_string(l.pids)));
    if (l.cpu > 0) {
      if (!dirs_.count("cpu")) return Unsupported("the cpu controller is not mounted (v1)", "limits.cpu");
      long quota = std::lround(l.cpu * 100000);
      RETURN_IF_ERROR(write_cgroup_file(dirs_.at("cpu") + "/cpu.cfs_period_us", "100000"));
      RETURN_IF_ERROR(write_cgroup_file(dirs_.at("cpu") + "/cpu.cfs_quota_us", std::to_string(quota)));
    }
    // The counters every exec reads, kept open: a pread is much cheaper than an open.
    auto keep = [](const std::string& path, int flags) { return open(path.c_str(), flags | O_CLOEXEC); };
    if (dirs_.count("cpuacct")) {
      cpu_user_ = keep(dirs_.at("cpuacct") + "/cpuacct.usage_user", O_RDONLY);
      cpu_sys_ = keep(dirs_.at("cpuacct") + "/cpuacct.usage_sys", O_RDONLY);
    }
    peak_ = keep(mem + "/memory.max_usage_in_bytes", O_RDWR);
    if (peak_ < 0) return SysError("open cgroup file", mem + "/memory.max_usage_in_bytes");
    pids_events_ = keep(dirs_.at("pids") + "/pids.events", O_RDONLY);
    // OOM notification: an eventfd registered on memory.oom_control.
    oom_control_ = open((mem + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
    oom_event_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (oom_control_ >= 0 && oom_event_ >= 0) {
      std::string reg = std::to_string(oom_event_) + " " + std::to_string(oom_control_);
      if (!write_cgroup_file(mem + "/cgroup.event_control", reg).ok()) {
        close(oom_event_);
        oom_event_ = -1;
      }
    }
    return Status::Ok();
  }

  std::vector<std::string> self_attach_files() const override {
    std::vector<std::string> out;
    for (const auto& [ctl, dir] : dirs_) out.push_back(dir + "/tasks");
    return out;
  }

  StatusOr<CgroupCounters> read() override {
    CgroupCounters c;
    std::string text;
    if (read_at_start(cpu_user_, &text)) c.cpu_user_us = std::strtoull(text.c_str(), nullptr, 10) / 1000;
    if (read_at_start(cpu_sys_, &text)) c.cpu_sys_us = std::strtoull(text.c_str(), nullptr, 10) / 1000;
    if (!read_at_start(peak_, &text)) return SysError("read cgroup file", dirs_.at("memory") + "/memory.max_usage_in_bytes");
    c.peak_memory_bytes = std::strtoull(text.c_str(), nullptr, 10);
    if (read_at_start(oom_control_, &text)) c.oom_kills = cgroup_stat_value(text, "oom_kill");
    if (read_at_start(pids_events_, &text)) c.pids_refused = cgroup_stat_value(text, "max");
    if (oom_event_ >= 0) {
      uint64_t drained;
      while (::read(oom_event_, &drained, sizeof drained) == sizeof drained) {
      }
    }
    return c;
  }

  Status reset_peak() override {
    if (pwrite(peak_, "0", 1, 0) != 1) return SysError("reset", dirs_.at("memory") + "/memory.max_usage_in_bytes");
    return Status::Ok();
  }

  int oom_fd() const override { return oom_event_; }
  short oom_poll_events() const override { return POLLIN; }

  Status kill_all() override {
    // Normally corral-init's end kills everything; this is the fallback for a cgroup whose
    // init is gone. Freeze the population first, then kill: pids.max 0 refuses every fork,
    // which is all a freezer would buy here, without a fifth hierarchy per sandbox.
    write_cgroup_file(dirs_.at("pids") + "/pids.max", "0");
    for (const auto& [ctl, dir] : dirs_) kill_cgroup_processes(dir);
    return Status::Ok();
  }

  Status remove() override {
    close_fds();
    Status first;
    for (const auto& [ctl, dir] : dirs_) {
      if (rmdir(dir.c_str()) != 0 && errno != ENOENT && first.ok()) first = SysError("remove cgroup", dir);
    }
    return first;
  }

 private:
  // A cgroup file's whole text, read from its start through a kept fd.
  static bool read_at_start(int fd, std::string* out) {
    if (fd < 0) return false;
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return false;
    out->assign(buf, static_cast<size_t>(n));
    return true;
  }

  void close_fds() {
    for (int* fd : {&oom_event_, &oom_control_, &cpu_user_, &cpu_sys_, &peak_, &pids_events_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  std::map<std::string, std::string> dirs_;
  int oom_control_ = -1;
  int oom_event_ = -1;
  int cpu_user_ = -1;
  int cpu_sys_ = -1;
  int peak_ = -1;
  int pids_events_ = -1;
};

class V1Driver : public CgroupDriver {
 public:
  explicit V1Driver(std::map<std::string, std::string> subtrees) : subtrees_(std::move(subtrees)) {}
  const char* name() const override { return "v1"; }
  bool clone_into() const override { return false; }

  std::vector<std::string> subtree_dirs() const override {
    std::vector<std::string> out;
    for (const auto& [ctl, dir] : subtrees_) out.push_back(dir);
    return out;
  }

  StatusOr<std::unique_ptr<SandboxCgroup>> create(const std::string& id, const Limits& limits) override {
    // Each hierarchy costs a mkdir, a write to cgroup.procs and an rmdir per sandbox, so only
    // the ones this sandbox needs: memory, pids, cpuacct (accounting), cpu for a CPU cap.
    std::map<std::string, std::string> dirs;
    for (const auto& [ctl, subtree] : subtrees_) {
      if (ctl == "cpu" && limits.cpu <= 0) continue;
      dirs[ctl] = subtree + "/" + id;
    }
    auto cg = std::make_unique<V1SandboxCgroup>(id, dirs);
    for (const auto& [ctl, dir] : dirs) {
      if (mkdir_sandbox_cgroup(dir) != 0) {
        Status s = SysError("create cgroup", dir);
        cg->remove();
        return s;
      }
    }
    Status s = cg->configure(limits);
    if (!s.ok()) {
      cg->remove();
      return s;
    }
    return std::unique_ptr<SandboxCgroup>(std::move(cg));
  }

 private:
  std::map<std::string, std::string> subtrees_;  // controller -> <own>/corral
};

}  // namespace

StatusOr<std::unique_ptr<CgroupDriver>> make_v1_driver(const CgroupLayout& layout) {
  std::map<std::string, std::string> subtrees;
  for (const auto& [ctl, own] : layout.v1_own) {
    // Hierarchies mounted together (cpu,cpuacct) share one directory tree. The subtree
    // itself is made with the first sandbox's cgroup (mkdir_sandbox_cgroup), which on v1
    // happens while corral-init builds its root filesystem: here, only whether it could be.
    std::string dir = own + "/corral";
    if (access(own.c_str(), W_OK) != 0) {
      if (ctl == "memory" || ctl == "pids") return SysError("cannot create the corral cgroup subtree in", own);
      continue;  // optional controllers are skipped, not fatal
    }
    bool shared = false;
    for (const auto& [other, d] : subtrees) shared |= d == dir;
    if (!shared) subtrees[ctl] = dir;
  }
  return std::unique_ptr<CgroupDriver>(new V1Driver(std::move(subtrees)));
}

}  // namespace corral::runtime
