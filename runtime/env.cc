#include "runtime/env.h"

#include <cstdlib>
#include <map>

namespace corral::runtime {

StatusOr<std::vector<std::string>> build_environment(const Policy& policy, const ExecRequest& req) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", policy.workdir},
      {"LANG", "C.UTF-8"},
      {"USER", "sandbox"},
      {"LOGNAME", "sandbox"},
      {"TMPDIR", "/tmp"},
  };
  for (const auto& name : policy.env_passthrough) {
    if (const char* v = getenv(name.c_str())) env[name] = v;
  }
  for (const auto& [k, v] : policy.env) env[k] = v;
  for (const auto& [k, v] : req.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
      return InvalidArgument("env." + k, "is not a valid variable name");
    }
    if (v.find('\0') != std::string::npos) return InvalidArgument("env." + k, "must not contain NUL");
    env[k] = v;
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace corral::runtime
