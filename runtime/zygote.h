// Zygote: a template interpreter with its heavy imports already done (for python: numpy,
// pandas, matplotlib), forked into fresh isolation for each sandbox, so user code starts
// with the imports loaded instead of paying ~0.6 s for them.
//
// How a zygote sandbox is made (NativeExecutor::create with SandboxSpec::zygote):
//   corral (root)                          template (corral-zygote, unprivileged)
//   claim ids, create cgroup, open its
//   attach files; socketpair  --spawn-->   clone3 with every namespace: a "spare" copy of
//                                          itself (with ZygoteOptions::spare, made ahead of
//                                          time); hand it the request, unread, and the fds:
//                                          it builds the LaunchPlan and becomes corral-init
//                                          (exactly as in the cold path, but a copy of the
//                                          template)
//                             <--pidfd--
//   write id maps, bring lo up, "go"  ...  the rest is the cold path's protocol: init joins
//                                          its cgroup through the fds, builds the rootfs,
//                                          reports ready and serves execs.
// An exec of the template's interpreter is then a fork of init that sets itself up like any
// worker (rlimits, no_new_privs, no capabilities, sandbox uid, fds closed, seccomp last) and
// runs the program in the interpreter it already holds (see worker.h). Any other exec is a
// normal execve, so a zygote sandbox is a complete sandbox.
//
// Why the template is safe to fork from:
// - No privileges: it runs as its own unprivileged host uid (kZygoteHostId) with no
//   capabilities and no supplementary groups, started by corral with a clean environment.
//   Its children get capabilities only inside the new user namespace clone3 creates, and
//   corral, not the template, writes that namespace's id maps.
// - No fds: it holds only its control socket to corral, a signalfd and, while it has one,
//   its spare's socket (a spare closes all but its own socket first thing, and that before
//   it becomes init); stdio is /dev/null.
// - No secrets: it never sees user code, request data or tokens. Code and exec requests go
//   straight from corral to the child's init over a socket the template never reads. Spawn
//   requests (a policy and a rootfs description) pass through it unparsed, in a buffer it
//   zeroes, to the spare that becomes that sandbox: nothing of one sandbox's policy (its
//   environment, say) is in the template's memory for the next sandbox to copy and read.
//   Its argv and environment (nothing secret in either) are zeroed in every child, as in
//   the cold path.
// - No shared state between runs: each run is a fresh fork of the same template, never of
//   a previous run. After the fork, Python's at-fork hooks reseed `random`, and corral
//   reseeds numpy's global generator from the kernel.
// What every run does share, by construction: the template's address-space layout (ASLR is
// per template, not per run) and Python's string-hash secret. Neither is a secret of another
// user's run; both are the price of not re-importing, as with any fork server.
//
// Falls back to the cold path (NativeExecutor decides) when the sandbox needs what the
// template cannot give: a rootfs other than host mode (its interpreter must be the one the
// sandbox sees), or a template that failed to start or died.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rootfs/store.h"
#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral::runtime {

// The template's host uid and gid: below the per-sandbox ids, never a sandbox's.
inline constexpr uid_t kZygoteHostId = (1u << 30) - 1;

// Frames between corral and the template (protocol.h framing; JSON payloads).
inline constexpr uint32_t kZygoteConfig = 200;   // corral -> template: ZygoteOptions as JSON
inline constexpr uint32_t kZygoteReady = 201;    // template -> corral: {python, preloaded, ms}
inline constexpr uint32_t kZygoteError = 202;    // template -> corral: {"error": "..."}
inline constexpr uint32_t kZygoteSpawn = 203;    // corral -> template: JSON; fds: child ctl, attach fds
inline constexpr uint32_t kZygoteSpawned = 204;  // template -> corral: {"pid"}; fds: pidfd

struct ZygoteOptions {
  std::string language = "python";
  std::string interpreter = "/usr/bin/python3";
  // Imported once in the template. Absent modules are skipped (and listed in info()).
  std::vector<std::string> preload = {"numpy", "pandas", "matplotlib", "matplotlib.pyplot"};
  // Run once after the imports so lazily loaded parts are in memory too; empty: none.
  std::string warmup =
      "import pandas as _pd, matplotlib.pyplot as _plt, io as _io\n"
      "str(_pd.DataFrame({'a': [1, 2]}).sum()); _plt.figure(); _plt.plot([1, 2]);"
      " _plt.savefig(_io.BytesIO(), format='png'); _plt.close('all')\n";
  std::string binary;  // corral-zygote; empty: next to the running binary, then the build tree
  std::string state_dir = "/run/corral";
  std::string cache_dir = "/var/cache/corral/zygote";  // the template's HOME (font caches)
  uint64_t start_timeout_ms = 120'000;
  // Keep the next sandbox's clone made ahead of time, a "spare" (see zygote_template.cc):
  // a spawn then hands a request to it instead of cloning the template while corral waits
  // (the clone of the template, 1-4 ms of a sandbox's creation here, leaves the critical
  // path). Off: each spawn clones then. With it the template always has one child that is no
  // sandbox yet: no ids are mapped in its user namespace, which is how tests tell it apart.
  bool spare = true;
  // Move the template's anonymous memory into a sealed file mapped privately in its place
  // (see snapshot_memory in zygote_template.cc): forks and exits of its copies no longer copy
  // and tear down ~15,000 page table entries each. Off: the memory stays anonymous.
  bool snapshot = true;
  // Find out once, in a fork of the template that runs `warmup` again, which pages of the
  // template a run writes (its page map: those now its own), and have every prepared worker
  // (see worker.h) copy them before its request instead of while the request waits (each
  // copy ~2 us here). Costs each prepared worker that much memory (info()["prefault_kb"]):
  // ~12.6 MB with the default warm-up, so an idle zygote sandbox holds ~14 MiB instead of
  // ~2.3; large pools of zygote sandboxes may want it off.
  bool prefault = true;

  nlohmann::json to_json() const;
  static ZygoteOptions from_json(const nlohmann::json& j);
};

struct ZygoteChild {
  pid_t pid = -1;
  int pidfd = -1;  // owned by the caller; the process is the template's child, not corral's
};

class Zygote {
 public:
  // Starts the template and waits until its imports are done.
  static StatusOr<std::unique_ptr<Zygote>> start(const ZygoteOptions& options);
  // Kills the template. Sandboxes already forked from it live on: like every sandbox, each
  // is controlled by corral over its own socket and ends when corral destroys it or exits.
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // A new corral-init for `policy` on `rootfs`. `child_ctl` becomes its control socket;
  // `attach_fds` are cgroup files it writes "0" to. Thread-safe (spawns are serialised).
  StatusOr<ZygoteChild> spawn(const Policy& policy, const rootfs::Rootfs& rootfs, bool has_cgroup,
                              const std::vector<int>& attach_fds, int child_ctl);

  bool alive() const;
  const ZygoteOptions& options() const { return options_; }
  // {"pid", "python", "preloaded": [...], "missing": [...], "start_ms"}
  const nlohmann::json& info() const { return info_; }

 private:
  Zygote() = default;
  ZygoteOptions options_;
  nlohmann::json info_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int ctl_ = -1;
  std::mutex mu_;
};

// Where corral-zygote is: options.binary, else next to /proc/self/exe, else the build tree.
std::string find_zygote_binary(const std::string& configured);

}  // namespace corral::runtime
