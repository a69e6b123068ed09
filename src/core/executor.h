// Executor: the one interface every backend implements (native, Docker, Podman, Kubernetes).
// Sessions, pools and servers are written against it and never reach below it.
//
//   create(spec)        -> a long-lived isolated Sandbox (namespaces + rootfs + limits)
//   exec(sandbox, req)  -> run one program in it, wait, return what happened
//   put_files/get_files -> move files in and out, resolved beneath the sandbox root only
//   destroy(sandbox)    -> kill everything in it and free every resource it held
//
// A one-shot run is create + exec + destroy.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/exec_result.h"
#include "src/core/policy.h"
#include "src/core/status.h"

namespace corral {

struct SandboxSpec {
  Policy policy;
  // Fork the sandbox from this language's zygote (an interpreter with its imports done)
  // when the backend has one running and the policy allows it; otherwise made cold, which
  // gives the same sandbox, only slower to start. Empty: always cold.
  std::string zygote;
};

struct ExecRequest {
  std::vector<std::string> argv;  // argv[0] is searched in PATH when it has no '/'
  std::string stdin_data;
  std::map<std::string, std::string> env;  // added to the policy's env for this exec
  std::string cwd;                          // empty: the policy's workdir
  std::optional<uint64_t> wall_ms;          // overrides policy.limits.wall_ms
  std::optional<uint64_t> output_bytes;     // overrides policy.limits.output_bytes
  // Optional streaming: called with output as it arrives (still captured and capped).
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
};

struct FileEntry {
  std::string path;  // inside the sandbox; relative paths are relative to the workdir
  std::string data;
  uint32_t mode = 0644;
};

// A program with what a language run needs around it (src/lang/runner.cc): files written
// just before it starts and a command run just after it ends, whose output is kept apart
// from the program's (the artifact listing).
struct StepRequest {
  std::vector<FileEntry> files;  // written with put_files' rules
  ExecRequest exec;
  std::string after;  // a /bin/sh command line run after the program, no stdin; empty: none
};

struct StepResult {
  ExecResult result;
  // The after command's stdout; nullopt when it did not run here (the backend leaves it to
  // the caller, or corral ended the program), so the caller runs it itself if it needs it.
  std::optional<std::string> after_stdout;
};

struct Features {
  std::string backend;
  bool user_namespace = false;
  bool seccomp = false;
  bool cgroups = false;
  bool overlay = false;
  std::vector<std::string> notes;  // what this host lacks and what corral does about it
};

class Sandbox {
 public:
  virtual ~Sandbox() = default;
  virtual const std::string& id() const = 0;
  virtual const Policy& policy() const = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) = 0;
  virtual StatusOr<ExecResult> exec(Sandbox& sandbox, const ExecRequest& request) = 0;
  virtual Status put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) = 0;
  // Reads regular files only; `max_bytes` caps each file (larger ones are refused).
  virtual StatusOr<std::vector<FileEntry>> get_files(Sandbox& sandbox,
                                                     const std::vector<std::string>& paths,
                                                     uint64_t max_bytes) = 0;
  virtual Status destroy(Sandbox& sandbox) = 0;
  virtual Features features() const = 0;

  // Starts a program that runs on in the background after this call returns — across later
  // execs, whose own processes still end with them — until it exits or the sandbox is
  // destroyed. At most one per sandbox. The call returns once the program has closed its
  // stdout and stderr while still running (its readiness signal: status ok, exit_code -1,
  // what it wrote before in stdout/stderr); if it exits first, the result is an ordinary
  // exec's. wall_ms bounds the start only. Interactive sessions keep their language's
  // driver (an interpreter holding the session's state) alive this way and talk to it with
  // short execs inside the sandbox. Backends that cannot do this return kUnsupported.
  virtual StatusOr<ExecResult> exec_detached(Sandbox& sandbox, const ExecRequest& request);

  // put_files, exec and the after command as one call. Backends where every call is a round
  // trip to an engine do them in one exec (small files travel with it); the default is
  // put_files then exec, leaving `after` to the caller. A path put_files would refuse is
  // the same Status error.
  virtual StatusOr<StepResult> exec_step(Sandbox& sandbox, const StepRequest& request);

  // create + exec + destroy. The sandbox is destroyed whatever exec returned.
  StatusOr<ExecResult> run_once(const SandboxSpec& spec, const ExecRequest& request);
};

}  // namespace corral
