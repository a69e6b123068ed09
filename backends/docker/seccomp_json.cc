#include "backends/docker/seccomp_json.h"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "seccomp/compiler.h"

namespace corral::docker {

namespace {

std::string action_name(const seccomp::Action& a) {
  switch (a.kind) {
    case seccomp::Action::Kind::kAllow: return "SCMP_ACT_ALLOW";
    case seccomp::Action::Kind::kErrno: return "SCMP_ACT_ERRNO";
    case seccomp::Action::Kind::kKill: return "SCMP_ACT_KILL_PROCESS";
    case seccomp::Action::Kind::kLog: return "SCMP_ACT_LOG";
  }
  return "SCMP_ACT_KILL_PROCESS";
}

const char* op_name(seccomp::ArgOp op) {
  switch (op) {
    case seccomp::ArgOp::kEq: return "SCMP_CMP_EQ";
    case seccomp::ArgOp::kNe: return "SCMP_CMP_NE";
    case seccomp::ArgOp::kLt: return "SCMP_CMP_LT";
    case seccomp::ArgOp::kLe: return "SCMP_CMP_LE";
    case seccomp::ArgOp::kGt: return "SCMP_CMP_GT";
    case seccomp::ArgOp::kGe: return "SCMP_CMP_GE";
    case seccomp::ArgOp::kMaskedEq: return "SCMP_CMP_MASKED_EQ";
  }
  return "SCMP_CMP_EQ";
}

// runc's masked_eq: (arg & value) == valueTwo.
nlohmann::json arg_json(unsigned index, seccomp::ArgOp op, uint64_t value, uint64_t mask) {
  if (op == seccomp::ArgOp::kMaskedEq) {
    return {{"index", index}, {"op", "SCMP_CMP_MASKED_EQ"}, {"value", mask}, {"valueTwo", value}};
  }
  return {{"index", index}, {"op", op_name(op)}, {"value", value}, {"valueTwo", 0}};
}

struct Cube {
  uint64_t mask, value;
};

// The complement of the union of `excluded` as disjoint cubes (as in seccomp/compiler.cc).
void complement(const Cube& cur, const std::vector<Cube>& excluded, std::vector<Cube>* out) {
  std::vector<Cube> live;
  uint64_t bits = 0;
  for (const Cube& e : excluded) {
    if (((e.value ^ cur.value) & e.mask & cur.mask) != 0) continue;
    if ((e.mask & ~cur.mask) == 0) return;
    live.push_back(e);
    bits |= e.mask & ~cur.mask;
  }
  if (live.empty()) {
    out->push_back(cur);
    return;
  }
  uint64_t bit = uint64_t{1} << (63 - __builtin_clzll(bits));
  complement({cur.mask | bit, cur.value}, live, out);
  complement({cur.mask | bit, cur.value | bit}, live, out);
}

const char* native_arch() {
#if defined(__x86_64__)
  return "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
  return "SCMP_ARCH_AARCH64";
#else
#error "add the SCMP_ARCH name of this architecture"
#endif
}

std::string rule_field(size_t i) { return "seccomp.rules[" + std::to_string(i) + "]"; }

}  // namespace

StatusOr<nlohmann::json> seccomp_to_docker(const seccomp::Profile& p) {
  // Per syscall, in first-seen order: which rules name it.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> refs;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    for (const std::string& n : p.rules[i].names) {
      if (!refs.count(n)) order.push_back(n);
      refs[n].push_back(i);
    }
  }
  // Output rules keyed by (action, args) so that syscalls sharing both share one entry.
  std::vector<std::pair<std::string, nlohmann::json>> out;  // key, rule
  std::map<std::string, size_t> by_key;
  auto emit = [&](const std::string& name, const seccomp::Action& a, const nlohmann::json& args) {
    nlohmann::json rule = {{"action", action_name(a)}, {"args", args}};
    if (a.kind == seccomp::Action::Kind::kErrno) rule["errnoRet"] = a.errno_value;
    std::string key = rule.dump();
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      rule["names"] = nlohmann::json::array();
      by_key[key] = out.size();
      out.emplace_back(key, rule);
      it = by_key.find(key);
    }
    out[it->second].second["names"].push_back(name);
  };

  const seccomp::Action& def = p.default_action;
  for (const std::string& name : order) {
    const seccomp::Rule* uncond = nullptr;
    size_t uncond_idx = 0;
    for (size_t i : refs[name]) {
      const seccomp::Rule& r = p.rules[i];
      if (!r.args.empty()) continue;
      if (uncond && uncond->action != r.action) {
        return InvalidArgument(rule_field(i), "\"" + name + "\" is also in " + rule_field(uncond_idx) +
                                                  " with a different action and no args");
      }
      if (!uncond) uncond = &r, uncond_idx = i;
    }
    const seccomp::Action base = uncond ? uncond->action : def;
    std::vector<size_t> exceptions;
    for (size_t i : refs[name]) {
      if (!p.rules[i].args.empty() && p.rules[i].action != base) exceptions.push_back(i);
    }
    if (uncond && base != def) {
      if (exceptions.empty()) {
        emit(name, base, nlohmann::json::array());
      } else {
        std::vector<Cube> excluded;
        const unsigned arg = p.rules[exceptions[0]].args[0].index;
        for (size_t i : exceptions) {
          const seccomp::Rule& r = p.rules[i];
          const seccomp::ArgCheck& a = r.args[0];
          if (r.args.size() != 1 || a.index != arg ||
              (a.op != seccomp::ArgOp::kEq && a.op != seccomp::ArgOp::kMaskedEq)) {
            return InvalidArgument(rule_field(i) + ".args",
                                   "an exception to an unconditional rule must be a single eq or masked_eq test");
          }
          excluded.push_back(a.op == seccomp::ArgOp::kEq ? Cube{~uint64_t{0}, a.value} : Cube{a.mask, a.value});
        }
        std::vector<Cube> allowed;
        complement({0, 0}, excluded, &allowed);
        if (allowed.size() > 256) return InvalidArgument(rule_field(exceptions[0]) + ".args", "too fragmented");
        for (const Cube& c : allowed) {
          emit(name, base, nlohmann::json::array({arg_json(arg, seccomp::ArgOp::kMaskedEq, c.value, c.mask)}));
        }
      }
    }
    for (size_t i : exceptions) {
      const seccomp::Rule& r = p.rules[i];
      if (r.action == def) continue;
      nlohmann::json args = nlohmann::json::array();
      for (const seccomp::ArgCheck& a : r.args) args.push_back(arg_json(a.index, a.op, a.value, a.mask));
      emit(name, r.action, args);
    }
  }

  nlohmann::json j;
  j["defaultAction"] = action_name(def);
  if (def.kind == seccomp::Action::Kind::kErrno) j["defaultErrnoRet"] = def.errno_value;
  j["architectures"] = {native_arch()};
  j["syscalls"] = nlohmann::json::array();
  for (auto& [key, rule] : out) j["syscalls"].push_back(std::move(rule));
  return j;
}

StatusOr<std::string> docker_seccomp_for(const std::string& name_or_path) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(name_or_path); it != cache.end()) return it->second;
  }
  std::string path = name_or_path.find('/') != std::string::npos
                         ? name_or_path
                         : seccomp::profile_dir() + "/" + name_or_path + ".json";
  std::ifstream in(path);
  if (!in) return Status(ErrorCode::kNotFound, "seccomp profile not found: " + path, "seccomp");
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument("seccomp", path + " is not valid JSON");
  ASSIGN_OR_RETURN(seccomp::Profile profile, seccomp::parse_profile(j));
  ASSIGN_OR_RETURN(nlohmann::json docker, seccomp_to_docker(profile));
  std::string text = docker.dump();
  std::lock_guard<std::mutex> lock(mu);
  cache[name_or_path] = text;
  return text;
}

}  // namespace corral::docker
