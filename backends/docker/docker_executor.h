// The Docker backend: sandboxes are containers, driven through the Docker Engine API directly
// (HTTP over the engine's socket, never the docker CLI). A sandbox is a container whose PID 1
// is an init with a sleeping child; every exec is an API exec as the sandbox user (uid 1000).
// The Podman backend is this class with podman's options (backends/podman/).
//
//   create   -> [volume create] + container create (container_config.h) + start
//   exec     -> exec create + start (upgraded connection: stdin in, framed stdout/stderr out)
//               + exec inspect; a timeout or output cap kills the sandbox user's processes
//               (all but a detached program's); OOM is read from the container's memory cgroup
//   exec_step   one exec through a shell helper (exec_helper.h): small text files written by
//               it, the program, the after command; larger or binary files by the archive API
//   exec_detached  the helper starts the program in the background and reports its pid
//   files    -> the archive API (tar), paths beneath the workdir only, same rules as native
//   destroy  -> container remove (force) + volume remove; never for an attached container
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/common/http_client.h"
#include "backends/docker/container_config.h"
#include "src/core/executor.h"

namespace corral::docker {

class ControlFilter;

struct EngineOptions {
  std::string flavor = "docker";  // "docker" | "podman": messages, features, defaults
  std::string endpoint;           // empty: /var/run/docker.sock (docker), /run/podman/podman.sock (podman)
  std::string image;              // what sandboxes start from
  std::string api_prefix = "/v1.41";
  std::string runtime;            // OCI runtime the engine should use; empty: its default
  std::vector<Ulimit> ulimits;    // engine-required ulimits (the policy's nofile/fsize win)
  bool init = true;
  bool workdir_volume = true;     // see ContainerOptions::workdir_volume
  // Podman's API reads "seccomp=" as a path on the engine's host (Docker's takes the JSON):
  // the translated profile is written beneath this directory (same host) and named instead.
  std::string seccomp_file_dir;
  std::string allowlist_network;  // for network allowlist policies; empty: refused
  // Connect to this existing container instead of creating one: create() checks that it runs
  // and that its limits are no weaker than the policy's; destroy() leaves it running.
  std::string attach_container;
  // Images this executor built, imported or committed are kept when it is destroyed (false:
  // removed then; see DockerExecutor::remove_owned_images).
  bool keep_template = true;
};

class DockerExecutor : public Executor {
 public:
  // Checks that the engine answers (GET /_ping); an error naming the endpoint otherwise.
  static StatusOr<std::unique_ptr<DockerExecutor>> connect(EngineOptions options);
  ~DockerExecutor() override;

  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override;
  StatusOr<ExecResult> exec(Sandbox& sandbox, const ExecRequest& request) override;
  StatusOr<StepResult> exec_step(Sandbox& sandbox, const StepRequest& request) override;
  StatusOr<ExecResult> exec_detached(Sandbox& sandbox, const ExecRequest& request) override;
  Status put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) override;
  StatusOr<std::vector<FileEntry>> get_files(Sandbox& sandbox, const std::vector<std::string>& paths,
                                             uint64_t max_bytes) override;
  Status destroy(Sandbox& sandbox) override;
  Features features() const override;

  // Images. Each returns the image id. A tag that already exists is refused by commit().
  // import_rootfs: a corral rootfs directory (or any root tree) as a single-layer image.
  StatusOr<std::string> import_rootfs(const std::string& rootfs_dir, const std::string& tag);
  // build_image: a Dockerfile build (the build API with a tar of `context_dir`).
  StatusOr<std::string> build_image(const std::string& context_dir, const std::string& dockerfile,
                                    const std::string& tag);
  // The sandbox's current filesystem as a new image (llm-sandbox's commit_container). Only
  // into a new tag: never over the base image or any image that exists.
  StatusOr<std::string> commit(Sandbox& sandbox, const std::string& tag);
  // Whether an image exists (by name or id).
  StatusOr<bool> image_exists(const std::string& name);
  // Removes the images this executor built, imported or committed (the destructor calls it
  // when keep_template is false). Never forced: an image a container still uses is kept,
  // under its tag (forcing would remove the container with it on Podman, and leave the
  // image untagged but present on Docker), and so is one whose tag now names another image
  // while other tags still name it. The error lists those kept; a later call (or the
  // destructor) tries them again.
  Status remove_owned_images();
  // Every container this engine holds with corral's label (for leak checks).
  StatusOr<std::vector<std::string>> list_sandbox_containers();
  StatusOr<std::vector<std::string>> list_sandbox_volumes();

  const EngineOptions& options() const { return options_; }
  http::Client& client() { return *client_; }

 protected:
  DockerExecutor(EngineOptions options, std::unique_ptr<http::Client> client);

 private:
  class ContainerSandbox;
  std::string api(const std::string& path) const { return options_.api_prefix + path; }
  StatusOr<std::unique_ptr<Sandbox>> attach(const SandboxSpec& spec);
  // One attached exec of `argv` with the request's stdin, env, cwd, limits and callbacks;
  // `control` (when given) takes the exec helper's records out of its stderr.
  StatusOr<ExecResult> run_attached(ContainerSandbox& sb, const std::vector<std::string>& argv,
                                    const ExecRequest& request, ControlFilter* control);
  // Kills every process of the sandbox user (not PID 1); kills the container if that fails.
  void kill_user_processes(ContainerSandbox& sb);
  // Whether the kernel OOM-killed something in the container since the last check.
  bool oom_since_last_check(ContainerSandbox& sb);
  StatusOr<std::string> exec_create(const std::string& container, const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env, const std::string& cwd, bool attach_stdin);
  StatusOr<std::string> wait_for_image_id(const std::string& step, const std::string& body);

  EngineOptions options_;
  std::unique_ptr<http::Client> client_;
  struct OwnedImage {
    std::string tag;  // as given to import_rootfs/build_image/commit
    std::string id;   // as the engine reported it (full or short, with or without "sha256:")
  };
  std::vector<OwnedImage> owned_images_;
};

}  // namespace corral::docker
