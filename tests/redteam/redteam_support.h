// Helpers for the red-team suite (redteam_test.cc): where the probes are, how to read their
// "SAFE/UNSAFE rowNN ..." lines, and host-side observations (processes, fds, mounts, memory)
// used to assert that the host and the supervisor are unaffected by what a probe did.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "src/core/exec_result.h"

namespace corral::redteam {

// CORRAL_PROBE_DIR, else the directory holding this test binary (meson builds both there).
std::string probe_dir();

struct ProbeReport {
  int safe = 0;
  std::vector<std::string> unsafe;  // every line starting with "UNSAFE"
};
ProbeReport parse_probe(const std::string& out);

// status, exit code, signal, message, stdout and stderr (both cut to a few KiB) in one string.
std::string describe(const ExecResult& r);

struct HostProcess {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  uid_t uid = 0;  // real uid
  std::string comm;
};
std::vector<HostProcess> host_processes();
std::vector<pid_t> children_of(pid_t parent);
std::vector<pid_t> pids_with_comm(const std::string& comm);
uid_t host_uid_of(pid_t pid);  // (uid_t)-1 if gone
bool alive(pid_t pid);         // exists and is not a zombie

long rss_kb();        // VmRSS of this process
int count_fds();      // entries of /proc/self/fd
int count_mounts();   // lines of /proc/self/mountinfo
std::string read_text(const std::string& path);  // "" when unreadable
bool write_text(const std::string& path, const std::string& data, int mode = 0644);

// Polls `cond` every 20 ms for up to `ms`; true as soon as it holds.
bool eventually(int ms, const std::function<bool()>& cond);

}  // namespace corral::redteam
