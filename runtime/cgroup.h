// cgroups: hard limits and honest accounting for a whole sandbox, on pure v2, hybrid and
// legacy v1 hosts. The driver is chosen by where the memory and pids controllers actually
// are, not by what is mounted: on a hybrid host (v2 mounted, controllers on v1) it is v1.
//
// Ownership (systemd's Delegate= model): corral owns the cgroup it was started in, in each
// hierarchy, and everything it creates lives in a "corral" subtree beneath it:
//   <own>/corral/<sandbox-id>            one per sandbox
//   <own>/corral/supervisor-<pid>        v2 only: where corral moves itself when the
//                                        no-internal-processes rule requires its own
//                                        cgroup to be empty before delegating controllers
// A corral process started from inside another's supervisor leaf shares that subtree.
// It never writes to a cgroup above or beside <own>.
//
// Per-exec accounting is by difference: counters are read (and the memory peak reset)
// before an exec and read again after it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral::runtime {

struct CgroupCounters {
  uint64_t cpu_user_us = 0;
  uint64_t cpu_sys_us = 0;
  uint64_t peak_memory_bytes = 0;  // since the last reset_peak()
  uint64_t oom_kills = 0;          // processes the OOM killer took
  uint64_t pids_refused = 0;       // forks refused at pids.max
};

class SandboxCgroup {
 public:
  virtual ~SandboxCgroup() = default;
  const std::string& id() const { return id_; }
  // How the sandbox's first process gets in, before it runs anything:
  // v2: an O_DIRECTORY fd for clone3(CLONE_INTO_CGROUP).
  virtual int clone_into_fd() const { return -1; }
  // v1: files the new process writes "0" to (through fds corral opened), moving itself. A
  // task moving itself skips the
  // global threadgroup rwsem whose writer waits for an RCU grace period (15-30 ms on an
  // idle machine, measured) when a supervisor moves another process in.
  virtual std::vector<std::string> self_attach_files() const { return {}; }
  // Files a process outside corral's control (a zygote's fork) writes "0" to, through fds
  // corral opened: the kernel checks the opener's credentials. v1: the tasks files above;
  // v2: the cgroup's cgroup.procs.
  virtual std::vector<std::string> attach_files() const { return self_attach_files(); }
  virtual StatusOr<CgroupCounters> read() = 0;
  virtual Status reset_peak() = 0;
  // A cgroup nothing has run in yet, whose counters all start from zero (one that the
  // sandbox's init joined after building the sandbox): the first exec needs no baseline
  // read and no peak reset. True once, for that exec.
  void mark_unused() { unused_ = true; }
  bool take_unused() { return std::exchange(unused_, false); }
  // An fd that becomes readable (POLLIN or POLLPRI, see oom_poll_events) when the OOM killer
  // acts in this cgroup; -1 if the host cannot notify.
  virtual int oom_fd() const { return -1; }
  virtual short oom_poll_events() const { return 0; }
  // Kills every process in the cgroup (v2 cgroup.kill; otherwise forks are stopped with
  // pids.max 0 and the listed processes killed until none is left).
  virtual Status kill_all() = 0;
  // Removes the cgroup; its processes must be gone.
  virtual Status remove() = 0;

 protected:
  explicit SandboxCgroup(std::string id) : id_(std::move(id)) {}
  std::string id_;
  bool unused_ = false;
};

class CgroupDriver {
 public:
  virtual ~CgroupDriver() = default;
  // Finds the controllers, this process's own cgroup, and prepares the corral subtree.
  // kUnsupported when neither v2 nor v1 offers both memory and pids.
  static StatusOr<std::unique_ptr<CgroupDriver>> detect();

  virtual const char* name() const = 0;  // "v2" or "v1"
  // Whether a new process can be born in a sandbox cgroup (clone3 CLONE_INTO_CGROUP, v2);
  // otherwise it joins by writing to the cgroup's attach files (v1).
  virtual bool clone_into() const = 0;
  // The directories of the corral subtree (one per hierarchy on v1).
  virtual std::vector<std::string> subtree_dirs() const = 0;
  virtual StatusOr<std::unique_ptr<SandboxCgroup>> create(const std::string& id, const Limits& limits) = 0;
  // Removes sandbox cgroups whose owner is gone (no live supervisor holds their uid slot),
  // killing anything still inside them. Returns how many were removed.
  StatusOr<int> remove_stale(const std::string& state_dir);
  // Removes the corral subtree directories if nothing lives in them any more (so that a
  // supervisor that is done leaves no cgroup behind). Busy ones are left alone.
  void remove_subtree_if_empty();
};

// Which driver detect() would choose here and why, without creating anything (doctor).
struct CgroupPlan {
  std::string driver;  // "v2", "v1" or "" (none usable)
  std::string detail;
};
CgroupPlan plan_cgroups();

// True if the sandbox id names a supervisor that no longer holds its uid slot lock.
bool sandbox_owner_gone(const std::string& state_dir, const std::string& sandbox_id);

// Helpers shared by both drivers.
// mkdir of a sandbox cgroup, recreating the corral subtree if another process removed it.
// Returns 0 or -1 with errno set.
int mkdir_sandbox_cgroup(const std::string& dir);
Status write_cgroup_file(const std::string& path, const std::string& value);
StatusOr<std::string> read_cgroup_file(const std::string& path);
// "key value" lines (cpu.stat, memory.events, memory.oom_control) -> value of `key`.
uint64_t cgroup_stat_value(const std::string& text, const std::string& key);

}  // namespace corral::runtime
