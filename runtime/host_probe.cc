#include "runtime/host_probe.h"

#include "runtime/cgroup.h"

#include <fcntl.h>
#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

namespace corral::runtime {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Creates the namespace in a throwaway child; returns "" or the errno text.
std::string try_unshare(int flags) {
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) _exit(unshare(flags) == 0 ? 0 : (errno & 0xff));
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return "";
  return WIFEXITED(st) ? strerror(WEXITSTATUS(st)) : "child crashed";
}

}  // namespace

std::vector<HostCheck> probe_host() {
  std::vector<HostCheck> out;
  struct utsname u;
  uname(&u);
  out.push_back({"kernel", true, false, std::string(u.release) + " " + u.machine, "informational"});
  bool root = geteuid() == 0;
  out.push_back({"root", root, true, root ? "running as uid 0" : "running as uid " + std::to_string(geteuid()),
                 root ? "the native backend can write id maps and configure namespaces"
                      : "the native backend refuses to start; run corral as root"});

  const std::pair<const char*, int> kNamespaces[] = {
      {"user namespace", CLONE_NEWUSER}, {"mount namespace", CLONE_NEWNS}, {"pid namespace", CLONE_NEWPID},
      {"network namespace", CLONE_NEWNET}, {"ipc namespace", CLONE_NEWIPC}, {"uts namespace", CLONE_NEWUTS},
      {"cgroup namespace", CLONE_NEWCGROUP},
  };
  for (const auto& [name, flag] : kNamespaces) {
    std::string err = try_unshare(flag == CLONE_NEWUSER ? flag : flag | CLONE_NEWUSER);
    out.push_back({name, err.empty(), true, err.empty() ? "can be created" : "unshare failed: " + err,
                   err.empty() ? "every sandbox gets its own" : "sandboxes cannot start on this host"});
  }

  std::string actions = read_file("/proc/sys/kernel/seccomp/actions_avail");
  bool notif = actions.find("user_notif") != std::string::npos;
  out.push_back({"seccomp filter", !actions.empty(), true, actions.empty() ? "not available" : "actions: " + actions,
                 notif ? "profiles compiled once with libseccomp; kills are reported with the syscall name"
                       : "profiles compiled with libseccomp; without user_notif kill actions cannot be reported"});

  std::string fss = read_file("/proc/filesystems");
  bool overlay = fss.find("overlay") != std::string::npos;
  out.push_back({"overlayfs", overlay, true, overlay ? "available" : "not in /proc/filesystems",
                 overlay ? "rootfs = read-only lower layer + size-capped tmpfs upper" : "sandboxes cannot start"});

  long r = syscall(SYS_openat2, -1, "", nullptr, 0);
  bool openat2 = !(r < 0 && errno == ENOSYS);
  out.push_back({"openat2", openat2, false, openat2 ? "available" : "missing (kernel < 5.6)",
                 openat2 ? "file copy in/out resolves paths with RESOLVE_IN_ROOT" : "file copy in/out is refused"});

  CgroupPlan cg = plan_cgroups();
  out.push_back({"cgroups", !cg.driver.empty(), false, cg.detail,
                 cg.driver.empty()
                     ? "no whole-sandbox memory/pids limits possible: sandboxes are refused unless the policy sets "
                       "allow_rlimit_fallback (per-process rlimits only)"
                     : "using the cgroup " + cg.driver + " driver: memory, pids and cpu per sandbox in a corral "
                       "subtree beneath corral's own cgroup"});
  return out;
}

}  // namespace corral::runtime
