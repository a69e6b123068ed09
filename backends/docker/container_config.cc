#include "backends/docker/container_config.h"

namespace corral::docker {

namespace {

constexpr uint64_t kDockerMinMemory = 6ull << 20;  // the engine refuses less

bool reserved_target(const std::string& target, const std::string& workdir) {
  return target == workdir || target == "/tmp" || target == "/" || target == "/proc" || target == "/dev" ||
         target == "/sys";
}

}  // namespace

uint64_t workdir_bytes(const Limits& limits) { return limits.disk_bytes - tmp_bytes(limits); }
uint64_t tmp_bytes(const Limits& limits) { return limits.disk_bytes / 4; }

std::vector<std::string> exec_env(const Policy& policy, const std::map<std::string, std::string>& passthrough,
                                  const std::map<std::string, std::string>& request_env) {
  std::map<std::string, std::string> all = policy.env;
  for (const auto& [k, v] : passthrough) all[k] = v;
  for (const auto& [k, v] : request_env) all[k] = v;
  if (!all.count("PATH")) all["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  if (!all.count("HOME")) all["HOME"] = policy.workdir;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

nlohmann::json workdir_volume_body(const Policy& policy, const ContainerOptions& options) {
  const std::string o = "size=" + std::to_string(workdir_bytes(policy.limits)) + ",uid=" +
                        std::to_string(kSandboxUid) + ",gid=" + std::to_string(kSandboxUid) +
                        ",mode=0700,nosuid,nodev";
  return {{"Name", options.volume_name},
          {"Driver", "local"},
          {"DriverOpts", {{"type", "tmpfs"}, {"device", "tmpfs"}, {"o", o}}},
          {"Labels", options.labels}};
}

StatusOr<nlohmann::json> container_create_body(const Policy& policy, const ContainerOptions& options) {
  const Limits& l = policy.limits;
  if (options.image.empty()) return InvalidArgument("image", "no image given for the container backend");
  if (l.cpu_ms != 0) {
    return Unsupported("the container engines have no per-exec CPU-time budget; use limits.wall_ms or limits.cpu",
                       "limits.cpu_ms");
  }
  if (l.memory_bytes < kDockerMinMemory) {
    return Unsupported("container engines need at least 6 MiB (6291456)", "limits.memory_bytes");
  }
  if (policy.rootfs != "host") {
    return Unsupported("on container backends the image is the root filesystem; choose it with --image, not rootfs '" +
                           policy.rootfs + "'",
                       "rootfs");
  }
  if (options.seccomp_json.empty()) {
    return Unsupported("no seccomp profile was translated for the engine (a container never runs unconfined)",
                       "seccomp");
  }
  if (l.disk_bytes < (4u << 20)) return InvalidArgument("limits.disk_bytes", "container backends need at least 4 MiB");

  nlohmann::json host;
  // Network: a fresh namespace with only lo ("none") covers both none and loopback.
  std::string network = "none";
  if (policy.network.mode == NetworkMode::kAllowlist) {
    if (options.allowlist_network.empty()) {
      return Unsupported(
          "the engine cannot filter egress by host:port itself; configure an allowlist network that does "
          "(BackendOptions / --network) or use network none|loopback",
          "network.allow");
    }
    network = options.allowlist_network;
  }
  host["NetworkMode"] = network;
  host["Memory"] = l.memory_bytes;
  host["MemorySwap"] = l.memory_bytes;  // equal: no swap on top
  host["PidsLimit"] = l.pids;
  if (l.cpu > 0) host["NanoCpus"] = static_cast<int64_t>(l.cpu * 1e9);
  host["CapDrop"] = {"ALL"};
  host["SecurityOpt"] = {"no-new-privileges", "seccomp=" + options.seccomp_json};
  host["ReadonlyRootfs"] = true;
  host["IpcMode"] = "private";
  host["Init"] = options.init;
  host["Privileged"] = false;
  host["PublishAllPorts"] = false;
  host["RestartPolicy"] = {{"Name", "no"}};
  host["AutoRemove"] = false;
  if (!options.runtime.empty()) host["Runtime"] = options.runtime;

  // Ulimits: the engine's required ones, with the policy's replacing the same names.
  std::map<std::string, Ulimit> ulimits;
  for (const Ulimit& u : options.ulimits) ulimits[u.name] = u;
  ulimits["nofile"] = {"nofile", static_cast<int64_t>(l.open_files), static_cast<int64_t>(l.open_files)};
  ulimits["fsize"] = {"fsize", static_cast<int64_t>(l.file_size_bytes), static_cast<int64_t>(l.file_size_bytes)};
  nlohmann::json ul = nlohmann::json::array();
  for (const auto& [name, u] : ulimits) ul.push_back({{"Name", name}, {"Soft", u.soft}, {"Hard", u.hard}});
  host["Ulimits"] = ul;

  // Writable places: the workdir and /tmp, sized from disk_bytes.
  nlohmann::json tmpfs = nlohmann::json::object();
  tmpfs["/tmp"] = "rw,nosuid,nodev,exec,size=" + std::to_string(tmp_bytes(l)) + ",mode=1777";
  nlohmann::json mounts = nlohmann::json::array();
  if (options.workdir_volume) {
    if (options.volume_name.empty()) return Internal("container config: workdir volume has no name");
    mounts.push_back({{"Type", "volume"}, {"Source", options.volume_name}, {"Target", policy.workdir},
                      {"ReadOnly", false}});
  } else {
    // Podman (the only engine taking this path) ignores tmpfs mode= and has no uid=: the
    // executor hands the directory to the sandbox user through the archive API after start.
    tmpfs[policy.workdir] = "rw,nosuid,nodev,exec,size=" + std::to_string(workdir_bytes(l));
  }
  for (size_t i = 0; i < policy.mounts.size(); ++i) {
    const MountSpec& m = policy.mounts[i];
    const std::string field = "mounts[" + std::to_string(i) + "]";
    if (m.target.empty() || m.target[0] != '/') return InvalidArgument(field + ".target", "must be an absolute path");
    if (reserved_target(m.target, policy.workdir)) {
      return InvalidArgument(field + ".target", m.target + " is managed by corral and cannot be mounted over");
    }
    if (m.type == MountSpec::Type::kTmpfs) {
      std::string opt = std::string(m.readonly ? "ro" : "rw") + ",nosuid,nodev,mode=1777";
      if (m.size_bytes) opt += ",size=" + std::to_string(m.size_bytes);
      tmpfs[m.target] = opt;
    } else {
      if (m.source.empty() || m.source[0] != '/') {
        return InvalidArgument(field + ".source", "a bind source must be an absolute host path");
      }
      mounts.push_back({{"Type", "bind"}, {"Source", m.source}, {"Target", m.target}, {"ReadOnly", m.readonly},
                        {"BindOptions", {{"Propagation", "rprivate"}}}});
    }
  }
  host["Tmpfs"] = tmpfs;
  host["Mounts"] = mounts;

  std::vector<std::string> env;
  for (const auto& [k, v] : policy.env) env.push_back(k + "=" + v);
  for (const auto& [k, v] : options.passthrough_env) env.push_back(k + "=" + v);

  nlohmann::json body;
  body["Image"] = options.image;
  body["Cmd"] = options.keepalive;
  body["Entrypoint"] = nlohmann::json::array();
  body["User"] = kKeepaliveUser;
  body["WorkingDir"] = policy.workdir;
  body["Hostname"] = policy.hostname;
  body["Env"] = env;
  body["Labels"] = options.labels;
  body["AttachStdin"] = false;
  body["AttachStdout"] = false;
  body["AttachStderr"] = false;
  body["Tty"] = false;
  body["OpenStdin"] = false;
  body["HostConfig"] = host;
  return body;
}

}  // namespace corral::docker
