#include "backends/docker/docker_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "backends/common/tar.h"
#include "backends/docker/exec_helper.h"
#include "backends/docker/exec_stream.h"
#include "backends/docker/seccomp_json.h"
#include "src/core/sandbox_path.h"

namespace corral::docker {

using Clock = std::chrono::steady_clock;

class DockerExecutor::ContainerSandbox : public Sandbox {
 public:
  const std::string& id() const override { return id_; }
  const Policy& policy() const override { return policy_; }

  std::string id_;
  Policy policy_;
  bool owned = true;
  bool dead = false;  // killed after a failed cleanup: every later exec fails
  std::string volume;
  std::map<std::string, std::string> passthrough;
  uint64_t oom_kills = 0;  // the cgroup's oom_kill counter at the last check
  bool no_shell = false;   // the image has no /bin/sh: no exec helper (exec_helper.h)
  std::optional<DetachedProgram> detached;  // the program exec_detached started, last reported
};

namespace {

std::string random_suffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

StatusOr<nlohmann::json> parse_json(const std::string& step, const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return Internal(step + ": the engine answered with invalid JSON");
  return j;
}

// "/sandbox/a/b" or "a/b" -> "a/b" beneath the workdir; the native backend's rules
// (src/core/sandbox_path.h): no empty path, no NUL, no "." or ".." component. Paths outside the workdir
// are refused: the engines' archive API can only reach the workdir's volume.
StatusOr<std::string> beneath_workdir(const std::string& field, const std::string& workdir, const std::string& path) {
  auto split = split_sandbox_path(field, workdir, path);
  if (!split.ok()) return split.status();
  const std::vector<std::string>& parts = *split;
  std::string rel, wd;
  for (const std::string& p : parts) rel += (rel.empty() ? "" : "/") + p;
  for (size_t k = 0; k < workdir.size();) {
    size_t j = workdir.find('/', k);
    if (j == std::string::npos) j = workdir.size();
    if (j > k) wd += (wd.empty() ? "" : "/") + workdir.substr(k, j - k);
    k = j + 1;
  }
  if (rel.size() <= wd.size() || rel.compare(0, wd.size(), wd) != 0 || rel[wd.size()] != '/') {
    return Status(ErrorCode::kUnsupported,
                  "container backends move files beneath the workdir (" + workdir + ") only: " + path, field);
  }
  return rel.substr(wd.size() + 1);
}

// The profile as a file named by its content's hash (written once: temp file + rename).
StatusOr<std::string> write_profile_file(const std::string& dir, const std::string& json) {
  char name[32];
  snprintf(name, sizeof name, "%016zx.json", std::hash<std::string>{}(json));
  const std::string path = dir + "/" + name;
  if (access(path.c_str(), R_OK) == 0) return path;
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create seccomp profile directory", dir);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return SysError("write seccomp profile", tmp);
  bool ok = ::write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size());
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return SysError("write seccomp profile", path);
  }
  return path;
}

}  // namespace

DockerExecutor::DockerExecutor(EngineOptions options, std::unique_ptr<http::Client> client)
    : options_(std::move(options)), client_(std::move(client)) {}

DockerExecutor::~DockerExecutor() {
  if (!options_.keep_template) (void)remove_owned_images();
}

StatusOr<std::unique_ptr<DockerExecutor>> DockerExecutor::connect(EngineOptions options) {
  if (options.endpoint.empty()) {
    options.endpoint = options.flavor == "podman" ? "unix:///run/podman/podman.sock" : "unix:///var/run/docker.sock";
  }
  ASSIGN_OR_RETURN(http::Endpoint ep, http::Endpoint::parse(options.endpoint));
  auto client = std::make_unique<http::Client>(ep);
  http::Request ping{"GET", "/_ping"};
  ping.timeout_ms = 5000;
  auto r = client->send(ping);
  if (!r.ok()) return Status(r.status().code(), options.flavor + ": " + r.status().message(), "endpoint");
  if (r->status != 200) {
    return Status(ErrorCode::kUnsupported,
                  options.flavor + ": the engine at " + ep.describe() + " answered _ping with HTTP " +
                      std::to_string(r->status),
                  "endpoint");
  }
  return std::unique_ptr<DockerExecutor>(new DockerExecutor(std::move(options), std::move(client)));
}

Features DockerExecutor::features() const {
  Features f;
  f.backend = options_.flavor;
  f.seccomp = true;
  f.cgroups = true;
  f.overlay = true;
  f.user_namespace = false;
  f.notes.push_back(options_.flavor + " engine at " + client_->endpoint().describe() + ", image " + options_.image);
  f.notes.push_back(
      "no per-exec CPU-time budget (limits.cpu_ms is refused); usage: wall time for every exec; for language "
      "and session runs also the CPU the container used during the run and its memory high-water mark when "
      "the run raised it (the engines cannot reset it per exec: 0 otherwise)");
  f.notes.push_back("files move beneath the workdir only (the archive API reaches the workdir, not /tmp)");
  return f;
}

StatusOr<std::unique_ptr<Sandbox>> DockerExecutor::create(const SandboxSpec& spec) {
  if (!options_.attach_container.empty()) return attach(spec);
  const Policy& policy = spec.policy;
  ContainerOptions co;
  co.image = options_.image;
  co.runtime = options_.runtime;
  co.ulimits = options_.ulimits;
  co.init = options_.init;
  co.workdir_volume = options_.workdir_volume;
  co.allowlist_network = options_.allowlist_network;
  co.labels = {{"corral.sandbox", "1"}};
  ASSIGN_OR_RETURN(co.seccomp_json, docker_seccomp_for(policy.seccomp));
  if (!options_.seccomp_file_dir.empty()) {
    ASSIGN_OR_RETURN(co.seccomp_json, write_profile_file(options_.seccomp_file_dir, co.seccomp_json));
  }
  for (const std::string& name : policy.env_passthrough) {
    if (const char* v = getenv(name.c_str())) co.passthrough_env[name] = v;
  }
  const std::string name = "corral-" + random_suffix();
  if (co.workdir_volume) co.volume_name = name + "-work";
  ASSIGN_OR_RETURN(nlohmann::json body, container_create_body(policy, co));

  auto sb = std::make_unique<ContainerSandbox>();
  sb->policy_ = policy;
  sb->passthrough = co.passthrough_env;
  if (co.workdir_volume) {
    http::Request vr{"POST", api("/volumes/create"), workdir_volume_body(policy, co).dump()};
    auto v = client_->call(options_.flavor + ": create the workdir volume", vr);
    if (!v.ok()) return v.status();
    sb->volume = co.volume_name;
  }
  auto cleanup = [&] {
    if (!sb->id_.empty()) {
      (void)client_->send({"DELETE", api("/containers/" + sb->id_ + "?force=1&v=1")});
    }
    if (!sb->volume.empty()) (void)client_->send({"DELETE", api("/volumes/" + sb->volume + "?force=1")});
  };
  http::Request cr{"POST", api("/containers/create?name=" + name), body.dump()};
  auto c = client_->call(options_.flavor + ": create the container from image " + options_.image, cr);
  if (!c.ok()) {
    cleanup();
    return c.status();
  }
  auto cj = parse_json("container create", c->body);
  if (!cj.ok() || !cj->contains("Id")) {
    cleanup();
    return Internal(options_.flavor + ": container create returned no Id");
  }
  sb->id_ = (*cj)["Id"].get<std::string>();
  auto s = client_->call(options_.flavor + ": start the container", {"POST", api("/containers/" + sb->id_ + "/start"), ""});
  if (!s.ok()) {
    cleanup();
    return s.status();
  }
  if (!co.workdir_volume) {
    // The workdir tmpfs belongs to root: a "./" entry (uid 1000, 0700) makes it the sandbox
    // user's, as the volume's uid=/mode= options do on Docker.
    tar::Entry dot;
    dot.type = tar::Entry::Type::kDir;
    dot.path = "./";
    dot.mode = 0700;
    dot.uid = dot.gid = kSandboxUid;
    auto archive = tar::write({dot});
    Status st = archive.ok() ? client_
                                   ->call(options_.flavor + ": hand the workdir to the sandbox user",
                                          {"PUT", api("/containers/" + sb->id_ + "/archive?path=" +
                                                      http::url_escape(policy.workdir)),
                                           *archive, "application/x-tar"})
                                   .status()
                             : archive.status();
    if (!st.ok()) {
      cleanup();
      return st;
    }
  }
  return std::unique_ptr<Sandbox>(std::move(sb));
}

StatusOr<std::unique_ptr<Sandbox>> DockerExecutor::attach(const SandboxSpec& spec) {
  const std::string& id = options_.attach_container;
  ASSIGN_OR_RETURN(http::Response r, client_->call(options_.flavor + ": inspect container " + id,
                                                   {"GET", api("/containers/" + http::url_escape(id) + "/json")}));
  ASSIGN_OR_RETURN(nlohmann::json j, parse_json("container inspect", r.body));
  if (!j.value("/State/Running"_json_pointer, false)) {
    return InvalidArgument("container", "container " + id + " is not running");
  }
  // Fail closed: the container's own limits must be no weaker than the policy's.
  const Limits& l = spec.policy.limits;
  const nlohmann::json& host = j["HostConfig"];
  auto num = [&](const char* k) { return host.contains(k) && host[k].is_number() ? host[k].get<int64_t>() : 0; };
  if (num("Memory") <= 0 || static_cast<uint64_t>(num("Memory")) > l.memory_bytes) {
    return Unsupported("the existing container's memory limit is weaker than the policy's", "limits.memory_bytes");
  }
  if (num("PidsLimit") <= 0 || static_cast<uint64_t>(num("PidsLimit")) > l.pids) {
    return Unsupported("the existing container's pids limit is weaker than the policy's", "limits.pids");
  }
  if (spec.policy.network.mode != NetworkMode::kAllowlist && host.value("NetworkMode", "") != "none") {
    return Unsupported("the existing container has a network; the policy allows none", "network.mode");
  }
  if (l.cpu_ms != 0) return Unsupported("no per-exec CPU-time budget on container engines", "limits.cpu_ms");
  auto sb = std::make_unique<ContainerSandbox>();
  sb->id_ = j["Id"].get<std::string>();
  sb->policy_ = spec.policy;
  sb->owned = false;
  for (const std::string& name : spec.policy.env_passthrough) {
    if (const char* v = getenv(name.c_str())) sb->passthrough[name] = v;
  }
  return std::unique_ptr<Sandbox>(std::move(sb));
}

Status DockerExecutor::destroy(Sandbox& sandbox) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (!sb.owned) return Status::Ok();  // attached: not ours to stop
  auto r = client_->send({"DELETE", api("/containers/" + sb.id_ + "?force=1&v=1")});
  if (!r.ok()) return r.status();
  if (r->status >= 300 && r->status != 404) {
    return Internal(options_.flavor + ": remove container " + sb.id_ + ": " + http::engine_message(r->body));
  }
  if (!sb.volume.empty()) {
    auto v = client_->send({"DELETE", api("/volumes/" + sb.volume + "?force=1")});
    if (!v.ok()) return v.status();
    if (v->status >= 300 && v->status != 404) {
      return Internal(options_.flavor + ": remove volume " + sb.volume + ": " + http::engine_message(v->body));
    }
  }
  sb.dead = true;
  return Status::Ok();
}

StatusOr<std::string> DockerExecutor::exec_create(const std::string& container, const std::vector<std::string>& argv,
                                                  const std::vector<std::string>& env, const std::string& cwd,
                                                  bool attach_stdin) {
  nlohmann::json body = {{"AttachStdin", attach_stdin}, {"AttachStdout", true}, {"AttachStderr", true},
                         {"Tty", false},         {"Cmd", argv},          {"Env", env},
                         {"WorkingDir", cwd},    {"User", kSandboxUser}, {"Privileged", false}};
  ASSIGN_OR_RETURN(http::Response r, client_->call(options_.flavor + ": create exec",
                                                   {"POST", api("/containers/" + container + "/exec"), body.dump()}));
  ASSIGN_OR_RETURN(nlohmann::json j, parse_json("exec create", r.body));
  if (!j.contains("Id") || !j["Id"].is_string()) return Internal(options_.flavor + ": exec create returned no Id");
  return j["Id"].get<std::string>();
}

void DockerExecutor::kill_user_processes(ContainerSandbox& sb) {
  // kill(-1) from the sandbox user reaches every process of that user and nothing else: PID 1
  // and its keep-alive child run as another user, so the container survives. The helper
  // spares a detached program's session (exec_helper.h); without a shell, plain kill.
  const std::vector<std::string> argv =
      sb.no_shell ? std::vector<std::string>{"kill", "-9", "-1"} : kill_argv(sb.detached);
  auto id = exec_create(sb.id_, argv, {"PATH=/usr/local/bin:/usr/bin:/bin"}, "/", false);
  if (id.ok()) {
    // Detached: the engine may hold an attached start back while the killed run's output is
    // still undrained (the caller goes on draining it).
    http::Request start{"POST", api("/exec/" + *id + "/start"), R"({"Detach":true,"Tty":false})"};
    start.timeout_ms = 10'000;
    if (client_->call(options_.flavor + ": start kill exec", start).ok()) return;
  }
  // No kill in the image, or the engine refused: end the whole container.
  (void)client_->send({"POST", api("/containers/" + sb.id_ + "/kill?signal=KILL"), ""});
  sb.dead = true;
}

bool DockerExecutor::oom_since_last_check(ContainerSandbox& sb) {
  // The container's own memory cgroup (v1 memory.oom_control or v2 memory.events) counts OOM
  // kills; the engine's State.OOMKilled is sticky and cannot tell a second OOM from the first.
  auto id = exec_create(sb.id_, {"cat", "/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"},
                        {"PATH=/usr/local/bin:/usr/bin:/bin"}, "/", false);
  if (id.ok()) {
    std::string out;
    http::Request r{"POST", api("/exec/" + *id + "/start"), R"({"Detach":false,"Tty":false})"};
    r.on_body = [&](std::string_view s) {
      out.append(s);
      return out.size() < 65536;
    };
    if (client_->send(r).ok()) {
      size_t at = out.find("oom_kill ");
      if (at != std::string::npos) {
        uint64_t n = strtoull(out.c_str() + at + 9, nullptr, 10);
        bool more = n > sb.oom_kills;
        sb.oom_kills = n;
        return more;
      }
    }
  }
  auto r = client_->send({"GET", api("/containers/" + sb.id_ + "/json")});
  if (!r.ok() || r->status != 200) return false;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return !j.is_discarded() && j.value("/State/OOMKilled"_json_pointer, false);
}

StatusOr<ExecResult> DockerExecutor::exec(Sandbox& sandbox, const ExecRequest& req) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (sb.dead) return InvalidArgument("sandbox", "sandbox " + sb.id_ + " was killed or destroyed");
  if (req.argv.empty()) return InvalidArgument("argv", "is empty");
  return run_attached(sb, req.argv, req, nullptr);
}

StatusOr<StepResult> DockerExecutor::exec_step(Sandbox& sandbox, const StepRequest& step) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (sb.dead) return InvalidArgument("sandbox", "sandbox " + sb.id_ + " was killed or destroyed");
  if (step.exec.argv.empty()) return InvalidArgument("argv", "is empty");
  // Small text files travel with the exec; anything else through the archive API first.
  std::vector<InlineFile> inline_files;
  if (!sb.no_shell && fits_inline(step.files)) {
    for (size_t i = 0; i < step.files.size(); ++i) {
      const FileEntry& f = step.files[i];
      ASSIGN_OR_RETURN(std::string rel,
                       beneath_workdir("files[" + std::to_string(i) + "].path", sb.policy_.workdir, f.path));
      inline_files.push_back({std::move(rel), f.data, f.mode});
    }
  } else if (!step.files.empty()) {
    RETURN_IF_ERROR(put_files(sandbox, step.files));
  }
  if (sb.no_shell) {
    ASSIGN_OR_RETURN(ExecResult r, run_attached(sb, step.exec.argv, step.exec, nullptr));
    return StepResult{std::move(r), std::nullopt};
  }
  const std::string marker = new_control_marker();
  ControlFilter control(marker);
  ASSIGN_OR_RETURN(ExecResult r, run_attached(sb, step_argv(marker, sb.policy_.workdir, inline_files, step.after,
                                                            step.exec.argv),
                                              step.exec, &control));
  if (control.records().empty() && r.status() == ExecStatus::kSetupError &&
      r.message.find("/bin/sh") != std::string::npos) {
    // No shell in the image (nothing ran): the archive API and plain execs from now on.
    sb.no_shell = true;
    if (!step.files.empty()) RETURN_IF_ERROR(put_files(sandbox, step.files));
    ASSIGN_OR_RETURN(ExecResult plain, run_attached(sb, step.exec.argv, step.exec, nullptr));
    return StepResult{std::move(plain), std::nullopt};
  }
  StepResult out{std::move(r), std::nullopt};
  if (const ControlFilter::Record* a = control.find('A')) out.after_stdout = a->payload;
  return out;
}

StatusOr<ExecResult> DockerExecutor::exec_detached(Sandbox& sandbox, const ExecRequest& req) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (sb.dead) return InvalidArgument("sandbox", "sandbox " + sb.id_ + " was killed or destroyed");
  if (req.argv.empty()) return InvalidArgument("argv", "is empty");
  const std::string marker = new_control_marker();
  const std::string fifo_dir = "/tmp/.corral-detach-" + marker.substr(marker.size() - 16);
  ControlFilter control(marker);
  ASSIGN_OR_RETURN(ExecResult r, run_attached(sb, detach_argv(marker, fifo_dir, sb.detached, req.argv), req, &control));
  const ControlFilter::Record* d = control.find('D');
  auto program = d ? DetachedProgram::parse(d->payload) : std::nullopt;
  if (program && r.status() == ExecStatus::kOk) {
    sb.detached = program;
    r.exit_code = -1;
    r.message = "running detached as pid " + program->pid;
  }
  return r;
}

StatusOr<ExecResult> DockerExecutor::run_attached(ContainerSandbox& sb, const std::vector<std::string>& argv,
                                                  const ExecRequest& req, ControlFilter* control) {
  const Policy& policy = sb.policy_;
  const uint64_t wall_ms = req.wall_ms.value_or(policy.limits.wall_ms);
  const uint64_t cap = req.output_bytes.value_or(policy.limits.output_bytes);
  const auto start = Clock::now();
  const bool has_stdin = !req.stdin_data.empty();
  ASSIGN_OR_RETURN(std::string exec_id,
                   exec_create(sb.id_, argv, exec_env(policy, sb.passthrough, req.env),
                               req.cwd.empty() ? policy.workdir : req.cwd, has_stdin));
  ASSIGN_OR_RETURN(auto stream, client_->upgrade(options_.flavor + ": start exec", api("/exec/" + exec_id + "/start"),
                                                 R"({"Detach":false,"Tty":false})"));
  ExecResult result;
  OutputSink out{cap, &result.stdout_data, &result.stdout_truncated, req.on_stdout};
  OutputSink err{cap, &result.stderr_data, &result.stderr_truncated, req.on_stderr};
  FrameDemux demux;
  bool over_cap = false, corrupt = false;
  auto to_err = [&](std::string_view d) {
    if (!err.add(d)) over_cap = true;
  };
  auto on_frame = [&](int s, std::string_view d) {
    if (s != 2) {
      if (!out.add(d)) over_cap = true;
    } else if (control) {
      control->feed(d, to_err);
    } else {
      to_err(d);
    }
  };
  auto feed = [&](std::string_view d) {
    if (!demux.feed(d, on_frame)) corrupt = true;
  };
  feed(stream->pending);
  size_t stdin_off = 0;
  bool stdin_open = has_stdin;
  bool killed = false;
  const auto deadline = start + std::chrono::milliseconds(wall_ms);
  Clock::time_point give_up{};  // after a kill: how long to wait for the stream to end
  std::string buf;
  for (;;) {
    if (!killed && (over_cap || corrupt)) {
      result.set_status(corrupt ? ExecStatus::kInternalError : ExecStatus::kOutputLimit,
                        corrupt ? "corrupt exec stream from the engine" : "");
      kill_user_processes(sb);
      killed = true;
      give_up = Clock::now() + std::chrono::seconds(5);
    }
    const auto now = Clock::now();
    if (!killed && now >= deadline) {
      result.set_status(ExecStatus::kTimeout, "wall-clock limit of " + std::to_string(wall_ms) + " ms");
      kill_user_processes(sb);
      killed = true;
      give_up = Clock::now() + std::chrono::seconds(5);
    }
    if (killed && Clock::now() >= give_up) break;
    if (stdin_open && stdin_off == req.stdin_data.size()) {
      stream->close_write();
      stdin_open = false;
    }
    const auto until = killed ? give_up : deadline;
    int wait_ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count()) + 1);
    pollfd p{stream->fd(), static_cast<short>(POLLIN | (stdin_open ? POLLOUT : 0)), 0};
    int pr = poll(&p, 1, wait_ms);
    if (pr < 0 && errno != EINTR) return SysError("poll exec stream");
    if (pr <= 0) continue;
    if (stdin_open && (p.revents & POLLOUT)) {
      auto n = stream->send_some(std::string_view(req.stdin_data).substr(stdin_off, 1 << 16));
      if (!n.ok()) {
        stdin_open = false;  // the program closed its stdin: like EPIPE natively
      } else {
        stdin_off += *n;
      }
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      buf.clear();
      auto more = stream->recv_some(&buf);
      if (!more.ok()) break;
      feed(buf);
      if (!*more) break;
    }
  }
  stream.reset();
  if (control) control->finish(to_err);

  // The exit code: the helper's record, else the engine's (the stream ends when the program
  // does; the engine records the code a moment later).
  int exit_code = -1;
  bool running = true;
  const ControlFilter::Record* x = control && !killed ? control->find('X') : nullptr;
  if (auto reported = x ? StepExit::parse(x->payload) : std::nullopt) {
    exit_code = reported->status;
    running = false;
    if (reported->cpu_user_ns && reported->cpu_sys_ns) {
      result.usage.cpu_user_ms = static_cast<double>(*reported->cpu_user_ns) / 1e6;
      result.usage.cpu_sys_ms = static_cast<double>(*reported->cpu_sys_ns) / 1e6;
    }
    if (reported->peak_memory_bytes) result.usage.peak_memory_bytes = *reported->peak_memory_bytes;
  }
  for (int i = 0; i < 500 && running; ++i) {
    ASSIGN_OR_RETURN(http::Response r,
                     client_->call(options_.flavor + ": inspect exec", {"GET", api("/exec/" + exec_id + "/json")}));
    ASSIGN_OR_RETURN(nlohmann::json j, parse_json("exec inspect", r.body));
    running = j.value("Running", false);
    if (!running && j.contains("ExitCode") && j["ExitCode"].is_number_integer()) exit_code = j["ExitCode"].get<int>();
    if (running) std::this_thread::sleep_for(std::chrono::milliseconds(i < 50 ? 1 : 10));
  }
  result.usage.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (running && !killed) {
    kill_user_processes(sb);
    result.set_status(ExecStatus::kInternalError, "the exec's output ended but the engine still reports it running");
  }
  result.exit_code = exit_code;
  if (killed) {
    // corral killed it (timeout, output cap): the status says why, the exit is the kill's.
    result.exit_code = -1;
    result.signal = exit_code > 128 ? exit_code - 128 : SIGKILL;
  }
  // The helper could not do its part (write a file, find the program): nothing ran.
  if (const ControlFilter::Record* e = control && !killed ? control->find('E') : nullptr) {
    result.set_status(ExecStatus::kSetupError, e->payload);
  }
  // The engines report a program killed by signal N as exit code 128+N (no way to tell it
  // from a program that exits with that code).
  if (exit_code > 128 && exit_code < 128 + 32) {
    const int sig = exit_code - 128;
    if (sig == SIGKILL && !killed && oom_since_last_check(sb)) {
      result.set_status(ExecStatus::kOom, "the kernel's OOM killer ended the program (limits.memory_bytes)");
    } else if (sig == SIGSYS) {
      result.set_status(ExecStatus::kSeccompViolation, "killed by SIGSYS: a syscall the seccomp profile kills on");
    }
    if (!killed) {
      result.signal = sig;
      result.exit_code = -1;
      result.set_status(ExecStatus::kSignaled, "killed by signal " + std::to_string(sig));
    }
  } else if (exit_code >= 125 && exit_code <= 127) {
    // The runtime could not start the program (not found, not executable, no pids left):
    // the engine's message is in the output; the native backend reports a setup error.
    const std::string& text = result.stdout_data.empty() ? result.stderr_data : result.stdout_data;
    if (text.find("OCI runtime") != std::string::npos || text.find("exec failed") != std::string::npos ||
        text.find("executable file not found") != std::string::npos) {
      result.set_status(ExecStatus::kSetupError, text.substr(0, text.find('\n')));
    }
  }
  if (exit_code == 0) result.set_status(ExecStatus::kOk);
  if (exit_code > 0) result.set_status(ExecStatus::kNonzeroExit);
  if (!result.has_status()) result.set_status(ExecStatus::kInternalError, "the engine reported no exit code");
  return result;
}

Status DockerExecutor::put_files(Sandbox& sandbox, const std::vector<FileEntry>& files) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (sb.dead) return InvalidArgument("sandbox", "sandbox " + sb.id_ + " was killed or destroyed");
  std::vector<tar::Entry> entries;
  std::set<std::string> dirs;
  for (size_t i = 0; i < files.size(); ++i) {
    ASSIGN_OR_RETURN(std::string rel, beneath_workdir("files[" + std::to_string(i) + "].path", sb.policy_.workdir,
                                                      files[i].path));
    // Parent directories as real directory entries: a symlink a program planted in their
    // place is replaced, never followed.
    for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
      std::string d = rel.substr(0, slash);
      if (dirs.insert(d).second) {
        tar::Entry e;
        e.type = tar::Entry::Type::kDir;
        e.path = d;
        e.mode = 0755;
        e.uid = e.gid = kSandboxUid;
        entries.push_back(e);
      }
    }
    tar::Entry e;
    e.path = rel;
    e.data = files[i].data;
    e.mode = files[i].mode & 0777;
    e.uid = e.gid = kSandboxUid;
    entries.push_back(std::move(e));
  }
  if (entries.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::string archive, tar::write(entries));
  http::Request r{"PUT", api("/containers/" + sb.id_ + "/archive?path=" + http::url_escape(sb.policy_.workdir)),
                  std::move(archive), "application/x-tar"};
  ASSIGN_OR_RETURN(http::Response resp, client_->call(options_.flavor + ": put files", r));
  (void)resp;
  return Status::Ok();
}

StatusOr<std::vector<FileEntry>> DockerExecutor::get_files(Sandbox& sandbox, const std::vector<std::string>& paths,
                                                           uint64_t max_bytes) {
  auto& sb = static_cast<ContainerSandbox&>(sandbox);
  if (sb.dead) return InvalidArgument("sandbox", "sandbox " + sb.id_ + " was killed or destroyed");
  std::vector<FileEntry> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    ASSIGN_OR_RETURN(std::string rel,
                     beneath_workdir("paths[" + std::to_string(i) + "]", sb.policy_.workdir, paths[i]));
    std::string abs = sb.policy_.workdir;
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    abs += (abs == "/" ? "" : "/") + rel;
    std::string archive;
    bool too_big = false;
    http::Request r{"GET", api("/containers/" + sb.id_ + "/archive?path=" + http::url_escape(abs))};
    r.on_body = [&](std::string_view s) {
      archive.append(s);
      // Stop reading well past the cap (the tar adds headers and padding).
      if (archive.size() > max_bytes + (1u << 20)) too_big = true;
      return !too_big;
    };
    ASSIGN_OR_RETURN(http::Response resp, client_->send(r));
    if (too_big) {
      return Status(ErrorCode::kResourceExhausted, "is over the limit of " + std::to_string(max_bytes) + " bytes",
                    paths[i]);
    }
    if (resp.status == 404) return Status(ErrorCode::kNotFound, "no such file in the sandbox", paths[i]);
    if (resp.status >= 300) {
      return Status(ErrorCode::kInternal, options_.flavor + ": get file: " + http::engine_message(archive), paths[i]);
    }
    // The engine's stat of the path: Podman resolves symlinks before archiving (the
    // archive then holds the target), but names the resolved path in linkTarget.
    if (auto st = resp.headers.find("x-docker-container-path-stat"); st != resp.headers.end()) {
      auto decoded = base64_decode(st->second);
      auto j = decoded.ok() ? nlohmann::json::parse(*decoded, nullptr, false) : nlohmann::json();
      if (j.is_object()) {
        const std::string link = j.value("linkTarget", "");
        const uint64_t mode = j.value("mode", uint64_t{0});
        if ((!link.empty() && link != abs) || (mode & (1ull << 27))) {  // Go's os.ModeSymlink
          return Status(ErrorCode::kInvalidArgument, "is a symlink; refusing to follow it", paths[i]);
        }
      }
    }
    auto entries = tar::read(archive, max_bytes);
    if (!entries.ok()) return Status(entries.status().code(), entries.status().message(), paths[i]);
    if (entries->empty()) return Status(ErrorCode::kNotFound, "the engine returned an empty archive", paths[i]);
    const tar::Entry& e = entries->front();
    if (e.type == tar::Entry::Type::kSymlink) {
      return Status(ErrorCode::kInvalidArgument, "is a symlink; refusing to follow it", paths[i]);
    }
    if (e.type != tar::Entry::Type::kFile) return Status(ErrorCode::kInvalidArgument, "is not a regular file", paths[i]);
    FileEntry f;
    f.path = paths[i];
    f.mode = e.mode & 0777;
    f.data = e.data;
    out.push_back(std::move(f));
  }
  return out;
}

StatusOr<std::vector<std::string>> DockerExecutor::list_sandbox_containers() {
  const std::string filters = http::url_escape(R"({"label":["corral.sandbox=1"]})");
  ASSIGN_OR_RETURN(http::Response r, client_->call(options_.flavor + ": list containers",
                                                   {"GET", api("/containers/json?all=1&filters=" + filters)}));
  ASSIGN_OR_RETURN(nlohmann::json j, parse_json("container list", r.body));
  std::vector<std::string> ids;
  for (const auto& c : j) ids.push_back(c.value("Id", ""));
  return ids;
}

StatusOr<std::vector<std::string>> DockerExecutor::list_sandbox_volumes() {
  const std::string filters = http::url_escape(R"({"label":["corral.sandbox=1"]})");
  ASSIGN_OR_RETURN(http::Response r, client_->call(options_.flavor + ": list volumes",
                                                   {"GET", api("/volumes?filters=" + filters)}));
  ASSIGN_OR_RETURN(nlohmann::json j, parse_json("volume list", r.body));
  std::vector<std::string> names;
  if (j.contains("Volumes") && j["Volumes"].is_array()) {
    for (const auto& v : j["Volumes"]) names.push_back(v.value("Name", ""));
  }
  return names;
}

}  // namespace corral::docker
