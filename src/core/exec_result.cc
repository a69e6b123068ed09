#include "src/core/exec_result.h"

#include <array>

#include <nlohmann/json.hpp>

#include "src/core/json_fields.h"

namespace corral {
namespace {

constexpr std::array<std::pair<ExecStatus, const char*>, 10> kStatusNames = {{
    {ExecStatus::kOk, "ok"},
    {ExecStatus::kNonzeroExit, "nonzero_exit"},
    {ExecStatus::kSignaled, "signaled"},
    {ExecStatus::kTimeout, "timeout"},
    {ExecStatus::kOom, "oom"},
    {ExecStatus::kOutputLimit, "output_limit"},
    {ExecStatus::kSeccompViolation, "seccomp_violation"},
    {ExecStatus::kPolicyViolation, "policy_violation"},
    {ExecStatus::kSetupError, "setup_error"},
    {ExecStatus::kInternalError, "internal_error"},
}};

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

const char* exec_status_name(ExecStatus s) {
  for (const auto& [st, name] : kStatusNames) {
    if (st == s) return name;
  }
  return "internal_error";
}

std::optional<ExecStatus> exec_status_from_name(const std::string& name) {
  for (const auto& [st, n] : kStatusNames) {
    if (name == n) return st;
  }
  return std::nullopt;
}

bool ExecResult::set_status(ExecStatus s, std::string msg) {
  if (status_) return false;
  status_ = s;
  if (!msg.empty()) message = std::move(msg);
  return true;
}

std::string base64_encode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

StatusOr<std::string> base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return InvalidArgument("base64", "length is not a multiple of 4");
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int a = val(in[i]), b = val(in[i + 1]);
    bool last = i + 4 == in.size();
    int c = (last && in[i + 2] == '=') ? -2 : val(in[i + 2]);
    int d = (last && in[i + 3] == '=') ? -2 : val(in[i + 3]);
    if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2)) {
      return InvalidArgument("base64", "invalid character at offset " + std::to_string(i));
    }
    uint32_t v = (a << 18) | (b << 12) | ((c < 0 ? 0 : c) << 6) | (d < 0 ? 0 : d);
    out += char(v >> 16);
    if (c >= 0) out += char((v >> 8) & 0xff);
    if (d >= 0) out += char(v & 0xff);
  }
  return out;
}

nlohmann::json ExecResult::to_json() const {
  nlohmann::json arts = nlohmann::json::array();
  for (const auto& a : artifacts) {
    nlohmann::json e = {{"path", a.path},           {"name", a.name},
                        {"mime", a.mime},           {"size", a.size},
                        {"bytes", base64_encode(a.bytes)}, {"truncated", a.truncated}};
    if (a.width || a.height) e["width"] = a.width, e["height"] = a.height;
    arts.push_back(std::move(e));
  }
  // Output may be arbitrary bytes; JSON strings must be UTF-8, so invalid sequences are
  // replaced (U+FFFD) in the JSON form. The raw bytes stay available to library callers.
  auto text = [](const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  nlohmann::json j = {
      {"status", exec_status_name(status())},
      {"exit_code", exit_code},
      {"signal", signal},
      {"message", message},
      {"stdout", nlohmann::json::parse(text(stdout_data))},
      {"stderr", nlohmann::json::parse(text(stderr_data))},
      {"stdout_truncated", stdout_truncated},
      {"stderr_truncated", stderr_truncated},
      {"usage",
       {{"wall_ms", usage.wall_ms},
        {"cpu_user_ms", usage.cpu_user_ms},
        {"cpu_sys_ms", usage.cpu_sys_ms},
        {"peak_memory_bytes", usage.peak_memory_bytes}}},
      {"artifacts", arts},
  };
  if (!stage.empty()) j["stage"] = stage;
  if (value) j["value"] = nlohmann::json::parse(text(*value));
  return j;
}

StatusOr<ExecResult> ExecResult::from_json(const nlohmann::json& j) {
  ExecResult r;
  JsonFields f(j, "");
  std::string status;
  f.string("status", &status);
  if (const auto* v = f.child("exit_code")) {
    if (!v->is_number_integer()) return InvalidArgument("exit_code", "must be an integer");
    r.exit_code = v->get<int>();
  }
  if (const auto* v = f.child("signal")) {
    if (!v->is_number_integer()) return InvalidArgument("signal", "must be an integer");
    r.signal = v->get<int>();
  }
  f.string("message", &r.message);
  f.string("stage", &r.stage);
  if (const auto* v = f.child("value"); v && !v->is_null()) {
    std::string text;
    f.string("value", &text);
    r.value = std::move(text);
  }
  f.string("stdout", &r.stdout_data);
  f.string("stderr", &r.stderr_data);
  f.boolean("stdout_truncated", &r.stdout_truncated);
  f.boolean("stderr_truncated", &r.stderr_truncated);
  if (const auto* u = f.child("usage")) {
    JsonFields uf(*u, "usage");
    uf.number("wall_ms", &r.usage.wall_ms, 0, 1e12);
    uf.number("cpu_user_ms", &r.usage.cpu_user_ms, 0, 1e12);
    uf.number("cpu_sys_ms", &r.usage.cpu_sys_ms, 0, 1e12);
    uf.u64("peak_memory_bytes", &r.usage.peak_memory_bytes, 0, UINT64_MAX);
    Status s = uf.finish();
    if (!s.ok()) return s;
  }
  if (const auto* arts = f.child("artifacts")) {
    if (!arts->is_array()) return InvalidArgument("artifacts", "must be an array");
    for (size_t i = 0; i < arts->size(); ++i) {
      Artifact a;
      std::string b64;
      JsonFields af((*arts)[i], "artifacts[" + std::to_string(i) + "]");
      af.string("path", &a.path);
      af.string("name", &a.name);
      af.string("mime", &a.mime);
      uint64_t w = 0, h = 0;
      af.u64("width", &w, 0, UINT32_MAX);
      af.u64("height", &h, 0, UINT32_MAX);
      a.width = static_cast<uint32_t>(w);
      a.height = static_cast<uint32_t>(h);
      af.u64("size", &a.size, 0, UINT64_MAX);
      af.string("bytes", &b64);
      af.boolean("truncated", &a.truncated);
      Status s = af.finish();
      if (!s.ok()) return s;
      auto bytes = base64_decode(b64);
      if (!bytes.ok()) return InvalidArgument("artifacts[" + std::to_string(i) + "].bytes", bytes.status().message());
      a.bytes = std::move(bytes).value();
      r.artifacts.push_back(std::move(a));
    }
  }
  Status s = f.finish();
  if (!s.ok()) return s;
  auto st = exec_status_from_name(status);
  if (!st) return InvalidArgument("status", "unknown status '" + status + "'");
  r.set_status(*st);
  return r;
}

}  // namespace corral
