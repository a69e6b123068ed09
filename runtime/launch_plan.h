// LaunchPlan: everything the sandbox's PID 1 (corral-init) needs, prepared by the supervisor
// *before* clone3. The child gets a copy of this memory with the clone and only reads it.
//
// Why: the supervisor may be multi-threaded (the HTTP server is). After a raw clone3 the
// child has one thread but inherits the other threads' locks as they were, so calling
// malloc (or anything that may take a lock) there can deadlock forever. Code that runs in
// corral-init and in the exec workers it forks therefore never allocates: every string,
// option and BPF program is built here, and the init side uses syscalls and fixed buffers.
#pragma once

#include <linux/filter.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "rootfs/store.h"
#include "seccomp/compiler.h"
#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral::runtime {

// Inside every sandbox: init runs as uid 0 (mapped to an unprivileged host uid) and holds
// capabilities only over the sandbox's own namespaces; user code runs as kSandboxUid.
inline constexpr uid_t kSandboxUid = 1000;
inline constexpr gid_t kSandboxGid = 1000;

struct MountStep {
  enum class Kind {
    kBindReadonly,  // source (host path, before pivot) -> target, read-only, nosuid, nodev
    kBindWritable,  // source -> target, nosuid, nodev
    kTmpfs,         // tmpfs with `options` at target
    kMaskFile,      // /dev/null over target if it exists (under /proc)
    kMaskDir,       // empty read-only tmpfs over target if it exists (under /proc)
    kReadonlyInPlace,  // re-bind target onto itself read-only, if it exists (under /proc)
  } kind;
  std::string source;   // absolute host path (binds)
  std::string target;   // absolute path under the new root, e.g. "/run/corral/mnt/root/usr"
  std::string options;  // tmpfs options
  bool target_is_file = false;  // bind of a file: create an empty file as mount point
};

struct LaunchPlan {
  // Staging: a size-capped tmpfs holding the overlay upper/work dirs, /tmp and /dev/shm.
  std::string staging;          // host dir used as mount point inside the private mount ns
  std::string staging_options;  // "size=...,mode=0755"
  std::string new_root;         // staging + "/root"
  std::string overlay_options;  // lowerdir=...,upperdir=...,workdir=...
  std::vector<std::string> staging_dirs;  // created inside the staging tmpfs (absolute)
  std::vector<MountStep> rootfs_mounts;   // after the overlay root, before /proc and /dev
  std::vector<MountStep> proc_masks;      // after /proc is mounted
  std::vector<MountStep> user_mounts;     // the policy's mounts
  std::string proc_target;
  std::string dev_target;
  std::string dev_options;
  std::vector<std::string> dev_nodes;  // names under /dev bound from the host (null, zero...)
  // A prepared /dev (see dev_template.h) bound read-only instead of the tmpfs and the binds
  // of dev_nodes; "" to build /dev here.
  std::string dev_template;
  std::string shm_source;              // staging dir bound to /dev/shm
  std::string tmp_source;              // staging dir bound to /tmp
  std::string workdir_in_root;         // new_root + workdir (created, owned by the sandbox user)

  std::string hostname;
  // A zygote's fork: the sandbox's cgroup attach files, opened by the supervisor and passed
  // in (the fork is not root). corral-init writes "0" to each first thing, then closes them.
  // (A cold-cloned init is sent them with kPlaced instead.)
  std::vector<int> cgroup_attach_fds;

  // Zygote sandboxes only (see runtime/zygote.h): an exec whose argv[0] is
  // `interpreter_path` is served by the interpreter already loaded in this process. The
  // worker is then a fork (not a vfork-style clone) of corral-init, set up exactly like any
  // other worker (stdio, rlimits, no_new_privs, no capabilities, sandbox uid, fds closed,
  // seccomp), and instead of execve it calls `interpret`, whose result is the exit status.
  // Returns -1 (errno set) if the argv is not one it serves: the worker then execs it.
  using InterpretFn = int (*)(char* const* argv, char* const* envp, const char* cwd);
  InterpretFn interpret = nullptr;
  using AcceptsFn = bool (*)(char* const* argv);  // allocation-free: init calls it
  AcceptsFn interpret_accepts = nullptr;
  // Run by a prepared worker (see worker.h) after its filter, before it waits for a request.
  using PrepareFn = void (*)();
  PrepareFn interpret_prepare = nullptr;
  // Run by a prepared worker first, before any isolation step of its own: copies the
  // template's pages a run is expected to write (ZygoteOptions::prefault), and stops once
  // `stop_fd` is readable (the request is there: it waits for no more copies). Only touches
  // this process's memory.
  using PrefaultFn = void (*)(int stop_fd);
  PrefaultFn prefault = nullptr;
  std::string interpreter_path;

  // Exec-time settings shared by every exec in this sandbox.
  std::shared_ptr<const seccomp::Program> seccomp;
  struct sock_fprog seccomp_prog{};  // points into seccomp->filter
  cap_t empty_caps = nullptr;        // cap_init(): all sets clear
  int last_cap = 0;
  struct Rlimit {
    int resource;
    rlim_t value;
  };
  std::vector<Rlimit> rlimits;
  // What the filter lets a worker still do once it is installed (seccomp/simulate.h), worked
  // out here once: the memory holder (clone(CLONE_VM) and pause; see worker.cc), and a worker
  // prepared ahead of its request (recvmsg, read, mmap, dup3, chdir, execve, ...; see
  // run_prepared_worker in worker.h).
  bool holder_allowed = false;
  bool prepared_worker_allowed = false;
};

// Every namespace but the cgroup one, which corral-init unshares once it is in its cgroup.
inline constexpr uint64_t kSandboxCloneFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                               CLONE_NEWIPC | CLONE_NEWUTS;

// The image's WorkingDir applies unless the policy chose a workdir of its own.
std::string workdir_for(const Policy& policy, const rootfs::Rootfs& rootfs);

// Everything corral-init will need, built before the clone (see the top of this file).
StatusOr<std::unique_ptr<LaunchPlan>> build_plan(const Policy& policy, const std::string& state_dir,
                                                 const rootfs::Rootfs& rootfs,
                                                 std::shared_ptr<const seccomp::Program> prog, bool has_cgroup);

}  // namespace corral::runtime
