#include <cstdio>

#include "runtime/host_probe.h"
#include "runtime/native_executor.h"
#include "runtime/netns.h"
#include "src/cli/commands.h"

namespace corral::cli {

int doctor_command(const std::vector<std::string>& args) {
  bool cleanup = false;
  for (const auto& a : args) {
    if (a == "--help") {
      puts("usage: corral doctor [--cleanup]\n\nChecks the kernel features the native backend uses and says what "
           "corral does about each.\n--cleanup  removes cgroups (and kills anything in them) left by corral "
           "processes that died, and the network namespaces kept prepared for the next `corral exec`");
      return 0;
    }
    if (a == "--cleanup") {
      cleanup = true;
      continue;
    }
    return usage_error("doctor: unknown option '" + a + "'");
  }
  if (cleanup) {
    runtime::NativeExecutor executor;
    auto removed = executor.remove_stale();
    if (!removed.ok()) return usage_error("doctor --cleanup: " + removed.status().to_string());
    printf("removed %d stale sandbox cgroup(s)\n", *removed);
    const int stashed = runtime::NetnsStash(runtime::NativeOptions{}.state_dir + "/netns").clear();
    printf("removed %d prepared network namespace(s)\n", stashed);
    return 0;
  }
  bool ready = true;
  for (const auto& c : runtime::probe_host()) {
    printf("%-4s %-18s %s\n     -> %s\n", c.ok ? "ok" : (c.required ? "FAIL" : "warn"), c.name.c_str(),
           c.detail.c_str(), c.action.c_str());
    if (c.required && !c.ok) ready = false;
  }
  printf("\n%s\n", ready ? "native sandboxes can run on this host" : "native sandboxes cannot run on this host");
  return ready ? 0 : 1;
}

}  // namespace corral::cli
