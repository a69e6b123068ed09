// Internal to the cgroup drivers: the host's layout as seen by this process, and the two
// driver factories (cgroup_v2.cc, cgroup_v1.cc).
#pragma once

#include <map>
#include <set>
#include <string>

#include "runtime/cgroup.h"

namespace corral::runtime {

inline const std::set<std::string> kV1Controllers = {"memory", "pids", "cpu", "cpuacct"};

struct CgroupLayout {
  std::string v2_mount;                       // where cgroup2 is mounted, if anywhere
  std::string v2_own;                         // this process's cgroup dir in it
  std::map<std::string, std::string> v1_own;  // controller -> this process's cgroup dir
};

CgroupLayout read_cgroup_layout();
StatusOr<std::unique_ptr<CgroupDriver>> make_v2_driver(const CgroupLayout& layout);
StatusOr<std::unique_ptr<CgroupDriver>> make_v1_driver(const CgroupLayout& layout);
// SIGKILLs every process listed in dir/cgroup.procs until it is empty (callers first stop
// forks with pids.max 0).
void kill_cgroup_processes(const std::string& dir);

}  // namespace corral::runtime
