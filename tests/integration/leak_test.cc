// Nothing may outlive its sandbox: 1,000 sequential runs (mixing normal exits, failures,
// timeouts and output caps) leave no mount, process, fd, namespace or uid lock behind.
#include <dirent.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

struct HostCounts {
  int mounts = 0;
  int children = 0;  // processes whose parent is this test
  int own_fds = 0;
  int sandbox_uid_processes = 0;  // processes running as a sandbox host uid (>= 2^30)
  std::set<std::string> namespaces;  // every namespace any process is in
  int locks = 0;
  int sandbox_cgroups = 0;  // "n..." directories in the corral cgroup subtree

  bool operator==(const HostCounts& o) const {
    return mounts == o.mounts && children == o.children && own_fds == o.own_fds &&
           sandbox_uid_processes == o.sandbox_uid_processes && namespaces == o.namespaces && locks == o.locks &&
           sandbox_cgroups == o.sandbox_cgroups;
  }
};

int count_lines(const char* path) {
  std::ifstream in(path);
  return static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
}

HostCounts take_counts(const std::vector<std::string>& cgroup_subtrees) {
  HostCounts c;
  for (const std::string& dir : cgroup_subtrees) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) c.sandbox_cgroups += e->d_type == DT_DIR && e->d_name[0] == 'n';
    closedir(d);
  }
  c.mounts = count_lines("/proc/self/mountinfo");
  // Locks held by this process: the sandbox uid slots.
  std::ifstream locks("/proc/locks");
  std::string line;
  std::string me = " ";  // built up piecewise: GCC 12 misreports the operator+ form (bug 105329)
  me += std::to_string(getpid());
  me += " ";
  while (std::getline(locks, line)) c.locks += line.find(me) != std::string::npos;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) c.own_fds += e->d_name[0] != '.';
  closedir(d);
  c.children = static_cast<int>(children_of(getpid()).size());
  d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    if (!isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::string base = "/proc/";
    base += e->d_name;
    std::ifstream status(base + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        unsigned long uid = std::stoul(line.substr(4));
        if (uid >= (1ul << 30)) ++c.sandbox_uid_processes;
      }
    }
    for (const char* ns : {"mnt", "net", "pid", "user", "ipc", "uts", "cgroup"}) {
      char buf[64] = {};
      if (readlink((base + "/ns/" + ns).c_str(), buf, sizeof buf - 1) > 0) c.namespaces.insert(buf);
    }
  }
  closedir(d);
  return c;
}

std::string describe(const HostCounts& c) {
  std::ostringstream o;
  o << "mounts=" << c.mounts << " children=" << c.children << " fds=" << c.own_fds
    << " sandbox-uid processes=" << c.sandbox_uid_processes << " namespaces=" << c.namespaces.size()
    << " locks=" << c.locks << " sandbox cgroups=" << c.sandbox_cgroups;
  return o.str();
}

using Leaks = SandboxTest;

TEST_F(Leaks, ThousandRunsLeaveNothingBehind) {
  run({"/bin/true"});  // warm: rootfs skeleton and seccomp cache exist before counting
  std::vector<std::string> subtrees;
  if (auto d = executor_.cgroups(); d.ok()) subtrees = (*d)->subtree_dirs();
  HostCounts before = take_counts(subtrees);
  EXPECT_EQ(before.sandbox_cgroups, 0);
  Policy quick = policy(R"({"limits": {"wall_ms": 50, "output_bytes": 100}})");
  int statuses[10] = {};
  for (int i = 0; i < 1000; ++i) {
    ExecResult r;
    switch (i % 10) {
      case 0: r = sh("sleep 5 & sleep 5", quick); break;                 // timeout with a background child
      case 1: r = sh("yes", quick); break;                               // output cap
      case 2: r = run({"/no/such/program"}); break;                      // setup error
      case 3: r = sh("exit 3"); break;                                    // nonzero exit
      case 4: r = sh("(sleep 100 &) ; echo daemon", quick); break;       // orphaned daemon
      default: r = run({"/bin/true"}); break;
    }
    statuses[static_cast<int>(r.status())]++;
  }
  EXPECT_EQ(statuses[static_cast<int>(ExecStatus::kTimeout)], 100);
  EXPECT_EQ(statuses[static_cast<int>(ExecStatus::kOutputLimit)], 100);
  EXPECT_EQ(statuses[static_cast<int>(ExecStatus::kSetupError)], 100);
  EXPECT_EQ(statuses[static_cast<int>(ExecStatus::kNonzeroExit)], 100);
  EXPECT_EQ(statuses[static_cast<int>(ExecStatus::kOk)], 600);
  // Network namespaces are freed by the kernel asynchronously; give it a moment.
  HostCounts after;
  for (int i = 0; i < 50; ++i) {
    after = take_counts(subtrees);
    if (after == before) break;
    usleep(100 * 1000);
  }
  EXPECT_EQ(describe(after), describe(before));
  EXPECT_EQ(after.namespaces, before.namespaces);
}

}  // namespace
}  // namespace corral::testing
