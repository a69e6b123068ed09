#include "src/core/policy.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "src/core/json_fields.h"

namespace corral {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kDayMs = 24ull * 3600 * 1000;

bool valid_env_name(const std::string& s) {
  if (s.empty() || !(isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool valid_hostname(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  }
  return true;
}

// An absolute, normalised path with no "." or ".." components.
Status check_sandbox_path(const std::string& field, const std::string& p) {
  if (p.empty() || p[0] != '/') return InvalidArgument(field, "must be an absolute path");
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part == "." || part == "..") return InvalidArgument(field, "must not contain '.' or '..'");
  }
  return Status::Ok();
}

Status parse_limits(const nlohmann::json& j, Limits* l) {
  JsonFields f(j, "limits");
  f.u64("wall_ms", &l->wall_ms, 1, kDayMs);
  f.u64("cpu_ms", &l->cpu_ms, 0, kDayMs);
  f.number("cpu", &l->cpu, 0, 1024);
  f.u64("memory_bytes", &l->memory_bytes, 4 * kMiB, 1024 * kGiB);
  f.u64("pids", &l->pids, 1, 1u << 22);
  f.u64("output_bytes", &l->output_bytes, 1, kGiB);
  f.u64("file_size_bytes", &l->file_size_bytes, 1, 1024 * kGiB);
  f.u64("disk_bytes", &l->disk_bytes, kMiB, 1024 * kGiB);
  f.u64("open_files", &l->open_files, 16, 1u << 20);
  RETURN_IF_ERROR(f.finish());
  if (l->cpu != 0 && l->cpu < 0.01) return InvalidArgument("limits.cpu", "must be 0 (no cap) or at least 0.01");
  return Status::Ok();
}

Status parse_network(const nlohmann::json& j, NetworkPolicy* n) {
  JsonFields f(j, "network");
  std::string mode = network_mode_name(n->mode);
  f.string("mode", &mode);
  f.string_list("allow", &n->allow);
  RETURN_IF_ERROR(f.finish());
  if (mode == "none") n->mode = NetworkMode::kNone;
  else if (mode == "loopback") n->mode = NetworkMode::kLoopback;
  else if (mode == "allowlist") n->mode = NetworkMode::kAllowlist;
  else return InvalidArgument("network.mode", "must be one of none, loopback, allowlist; got '" + mode + "'");
  if (n->mode != NetworkMode::kAllowlist && !n->allow.empty()) {
    return InvalidArgument("network.allow", "is only valid with mode allowlist");
  }
  for (size_t i = 0; i < n->allow.size(); ++i) {
    const std::string& e = n->allow[i];
    auto colon = e.rfind(':');
    std::string field = "network.allow[" + std::to_string(i) + "]";
    if (colon == std::string::npos || colon == 0) return InvalidArgument(field, "must be host:port");
    std::string port = e.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) == 0 || std::stoul(port) > 65535) {
      return InvalidArgument(field, "port must be 1-65535");
    }
  }
  return Status::Ok();
}

Status parse_mount(const nlohmann::json& j, const std::string& path, MountSpec* m) {
  JsonFields f(j, path);
  std::string type = "bind";
  f.string("type", &type);
  f.string("source", &m->source);
  f.string("target", &m->target);
  f.boolean("readonly", &m->readonly);
  f.u64("size_bytes", &m->size_bytes, kMiB, 1024 * kGiB);
  RETURN_IF_ERROR(f.finish());
  if (type == "bind") m->type = MountSpec::Type::kBind;
  else if (type == "tmpfs") m->type = MountSpec::Type::kTmpfs;
  else return InvalidArgument(path + ".type", "must be bind or tmpfs; got '" + type + "'");
  RETURN_IF_ERROR(check_sandbox_path(path + ".target", m->target));
  if (m->target == "/") return InvalidArgument(path + ".target", "must not be /");
  for (const char* reserved : {"/proc", "/dev", "/sys"}) {
    std::string r = reserved;
    if (m->target == r || m->target.rfind(r + "/", 0) == 0) {
      return InvalidArgument(path + ".target", "must not be inside " + r);
    }
  }
  if (m->type == MountSpec::Type::kBind) {
    if (m->source.empty()) return InvalidArgument(path + ".source", "is required for a bind mount");
    RETURN_IF_ERROR(check_sandbox_path(path + ".source", m->source));
    if (m->size_bytes) return InvalidArgument(path + ".size_bytes", "is only valid for tmpfs");
  } else {
    if (!m->source.empty()) return InvalidArgument(path + ".source", "is not valid for tmpfs");
    if (!m->size_bytes) m->size_bytes = 64 * kMiB;
  }
  return Status::Ok();
}

}  // namespace

const char* network_mode_name(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::kNone: return "none";
    case NetworkMode::kLoopback: return "loopback";
    case NetworkMode::kAllowlist: return "allowlist";
  }
  return "?";
}

StatusOr<Policy> Policy::from_json(const nlohmann::json& j) {
  Policy p;
  JsonFields f(j, "");
  if (const auto* v = f.child("limits")) {
    Status s = parse_limits(*v, &p.limits);
    if (!s.ok()) return s;
  }
  if (const auto* v = f.child("network")) {
    Status s = parse_network(*v, &p.network);
    if (!s.ok()) return s;
  }
  if (const auto* v = f.child("mounts")) {
    if (!v->is_array()) return InvalidArgument("mounts", std::string("must be an array, got ") + json_type_phrase(*v));
    for (size_t i = 0; i < v->size(); ++i) {
      MountSpec m;
      Status s = parse_mount((*v)[i], "mounts[" + std::to_string(i) + "]", &m);
      if (!s.ok()) return s;
      p.mounts.push_back(std::move(m));
    }
  }
  f.string_map("env", &p.env);
  f.string_list("env_passthrough", &p.env_passthrough);
  f.string("seccomp", &p.seccomp);
  f.string("hostname", &p.hostname);
  f.string("language", &p.language);
  f.string("rootfs", &p.rootfs);
  f.string("workdir", &p.workdir);
  f.boolean("allow_rlimit_fallback", &p.allow_rlimit_fallback);
  Status s = f.finish();
  if (!s.ok()) return s;

  for (const auto& [k, v] : p.env) {
    if (!valid_env_name(k)) return InvalidArgument("env." + k, "is not a valid variable name");
  }
  for (size_t i = 0; i < p.env_passthrough.size(); ++i) {
    if (!valid_env_name(p.env_passthrough[i])) {
      return InvalidArgument("env_passthrough[" + std::to_string(i) + "]", "is not a valid variable name");
    }
  }
  if (p.seccomp.empty()) return InvalidArgument("seccomp", "must name a profile or a profile file");
  if (!valid_hostname(p.hostname)) {
    return InvalidArgument("hostname", "must be 1-63 letters, digits or '-', not starting or ending with '-'");
  }
  if (p.rootfs.empty()) return InvalidArgument("rootfs", "must not be empty");
  s = check_sandbox_path("workdir", p.workdir);
  if (!s.ok()) return s;
  return p;
}

StatusOr<Policy> Policy::from_json_text(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("policy", "is not valid JSON");
  return from_json(j);
}

StatusOr<Policy> Policy::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return SysError("cannot read policy file", errno, path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path, "policy file is not valid JSON");
  return from_json(j);
}

nlohmann::json Policy::to_json() const {
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : this->mounts) {
    nlohmann::json e = {{"type", m.type == MountSpec::Type::kBind ? "bind" : "tmpfs"},
                        {"target", m.target},
                        {"readonly", m.readonly}};
    if (m.type == MountSpec::Type::kBind) e["source"] = m.source;
    else e["size_bytes"] = m.size_bytes;
    mounts.push_back(std::move(e));
  }
  return {
      {"limits",
       {{"wall_ms", limits.wall_ms},
        {"cpu_ms", limits.cpu_ms},
        {"cpu", limits.cpu},
        {"memory_bytes", limits.memory_bytes},
        {"pids", limits.pids},
        {"output_bytes", limits.output_bytes},
        {"file_size_bytes", limits.file_size_bytes},
        {"disk_bytes", limits.disk_bytes},
        {"open_files", limits.open_files}}},
      {"network", {{"mode", network_mode_name(network.mode)}, {"allow", network.allow}}},
      {"mounts", mounts},
      {"env", env},
      {"env_passthrough", env_passthrough},
      {"seccomp", seccomp},
      {"hostname", hostname},
      {"language", language},
      {"rootfs", rootfs},
      {"workdir", workdir},
      {"allow_rlimit_fallback", allow_rlimit_fallback},
  };
}

}  // namespace corral
