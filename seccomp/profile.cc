#include "seccomp/profile.h"

#include <cerrno>
#include <cstring>
#include <set>

#include "src/core/json_fields.h"

namespace corral::seccomp {
namespace {

struct ErrnoName {
  const char* name;
  int value;
};

// The errno names a profile may use; anything else can be given as a number.
constexpr ErrnoName kErrnoNames[] = {
    {"EPERM", EPERM},
    {"ENOENT", ENOENT},
    {"ESRCH", ESRCH},
    {"EINTR", EINTR},
    {"EIO", EIO},
    {"ENXIO", ENXIO},
    {"E2BIG", E2BIG},
    {"ENOEXEC", ENOEXEC},
    {"EBADF", EBADF},
    {"ECHILD", ECHILD},
    {"EAGAIN", EAGAIN},
    {"ENOMEM", ENOMEM},
    {"EACCES", EACCES},
    {"EFAULT", EFAULT},
    {"EBUSY", EBUSY},
    {"EEXIST", EEXIST},
    {"EXDEV", EXDEV},
    {"ENODEV", ENODEV},
    {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR},
    {"EINVAL", EINVAL},
    {"ENFILE", ENFILE},
    {"EMFILE", EMFILE},
    {"ENOTTY", ENOTTY},
    {"ETXTBSY", ETXTBSY},
    {"EFBIG", EFBIG},
    {"ENOSPC", ENOSPC},
    {"ESPIPE", ESPIPE},
    {"EROFS", EROFS},
    {"EMLINK", EMLINK},
    {"EPIPE", EPIPE},
    {"ERANGE", ERANGE},
    {"ENOSYS", ENOSYS},
    {"ENOTSUP", ENOTSUP},
    {"EOPNOTSUPP", EOPNOTSUPP},
    {"ENOTSOCK", ENOTSOCK},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT},
    {"ESOCKTNOSUPPORT", ESOCKTNOSUPPORT},
    {"EPFNOSUPPORT", EPFNOSUPPORT},
    {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"EADDRNOTAVAIL", EADDRNOTAVAIL},
    {"ENETDOWN", ENETDOWN},
    {"ENETUNREACH", ENETUNREACH},
    {"ECONNREFUSED", ECONNREFUSED},
    {"ECONNRESET", ECONNRESET},
    {"ETIMEDOUT", ETIMEDOUT},
    {"EHOSTUNREACH", EHOSTUNREACH},
    {"ENOTCONN", ENOTCONN},
    {"EDQUOT", EDQUOT},
};

constexpr int kMaxErrno = 4095;  // the kernel's MAX_ERRNO

struct OpName {
  const char* name;
  ArgOp op;
};
constexpr OpName kOps[] = {
    {"eq", ArgOp::kEq}, {"ne", ArgOp::kNe}, {"lt", ArgOp::kLt},        {"le", ArgOp::kLe},
    {"gt", ArgOp::kGt}, {"ge", ArgOp::kGe}, {"masked_eq", ArgOp::kMaskedEq},
};

bool valid_profile_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Argument values: a JSON integer (negative ones are taken as two's complement, as a sign-
// extended int argument arrives in the register) or a string "0x1f" / "31" for readability.
Status parse_u64_value(const nlohmann::json& v, const std::string& field, bool allow_negative,
                       uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return Status::Ok();
  }
  if (v.is_number_integer()) {
    int64_t n = v.get<int64_t>();
    if (n < 0 && !allow_negative) return InvalidArgument(field, "must not be negative");
    *out = static_cast<uint64_t>(n);
    return Status::Ok();
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const std::string digits = hex ? s.substr(2) : s;
    if (digits.empty() || digits.size() > (hex ? 16u : 20u)) {
      return InvalidArgument(field, "must be an integer or a string like \"0x7e020000\", got \"" + s + "\"");
    }
    unsigned __int128 n = 0;
    for (char c : digits) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (hex && c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (hex && c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return InvalidArgument(field, "must be an integer or a string like \"0x7e020000\", got \"" + s + "\"");
      }
      n = n * (hex ? 16 : 10) + d;
    }
    if (n > UINT64_MAX) return InvalidArgument(field, "does not fit in 64 bits");
    *out = static_cast<uint64_t>(n);
    return Status::Ok();
  }
  if (v.is_number_float()) return InvalidArgument(field, "must be a whole number");
  return InvalidArgument(field, std::string("must be an integer, got ") + json_type_phrase(v));
}

Status parse_arg(const nlohmann::json& j, const std::string& path, ArgCheck* out) {
  JsonFields f(j, path);
  uint64_t index = 0;
  std::string op;
  f.u64("index", &index, 0, 5);
  f.string("op", &op);
  const nlohmann::json* value = f.child("value");
  const nlohmann::json* mask = f.child("mask");
  RETURN_IF_ERROR(f.finish());
  if (!j.contains("index")) return InvalidArgument(f.name("index"), "is required (0..5)");
  if (!j.contains("op")) return InvalidArgument(f.name("op"), "is required (eq ne lt le gt ge masked_eq)");
  if (!value) return InvalidArgument(f.name("value"), "is required");
  out->index = static_cast<unsigned>(index);
  bool found = false;
  for (const auto& o : kOps) {
    if (op == o.name) {
      out->op = o.op;
      found = true;
    }
  }
  if (!found) {
    return InvalidArgument(f.name("op"), "unknown op \"" + op + "\" (expected eq, ne, lt, le, gt, ge or masked_eq)");
  }
  RETURN_IF_ERROR(parse_u64_value(*value, f.name("value"), /*allow_negative=*/true, &out->value));
  if (out->op == ArgOp::kMaskedEq) {
    if (!mask) return InvalidArgument(f.name("mask"), "is required with op masked_eq");
    RETURN_IF_ERROR(parse_u64_value(*mask, f.name("mask"), /*allow_negative=*/false, &out->mask));
    if (out->mask == 0) return InvalidArgument(f.name("mask"), "must not be 0 (the test would always be true)");
    if ((out->value & ~out->mask) != 0) {
      return InvalidArgument(f.name("value"), "has bits outside mask (the test could never be true)");
    }
  } else if (mask) {
    return InvalidArgument(f.name("mask"), "is only used with op masked_eq");
  }
  return Status::Ok();
}

Status parse_rule(const nlohmann::json& j, const std::string& path, Rule* out) {
  JsonFields f(j, path);
  std::string action;
  f.string_list("names", &out->names);
  f.string("action", &action);
  f.boolean("optional", &out->optional);
  f.string("comment", &out->comment);
  const nlohmann::json* args = f.child("args");
  RETURN_IF_ERROR(f.finish());
  if (!j.contains("names")) return InvalidArgument(f.name("names"), "is required");
  if (out->names.empty()) return InvalidArgument(f.name("names"), "must name at least one syscall");
  for (size_t i = 0; i < out->names.size(); ++i) {
    if (out->names[i].empty()) {
      return InvalidArgument(f.name("names") + "[" + std::to_string(i) + "]", "must not be empty");
    }
  }
  if (!j.contains("action")) return InvalidArgument(f.name("action"), "is required");
  ASSIGN_OR_RETURN(out->action, parse_action(action, f.name("action")));
  if (args && !args->is_null()) {
    if (!args->is_array()) {
      return InvalidArgument(f.name("args"), std::string("must be an array, got ") + json_type_phrase(*args));
    }
    if (args->size() > 6) return InvalidArgument(f.name("args"), "has more than 6 comparisons");
    unsigned seen = 0;
    for (size_t i = 0; i < args->size(); ++i) {
      const std::string apath = f.name("args") + "[" + std::to_string(i) + "]";
      ArgCheck a;
      RETURN_IF_ERROR(parse_arg((*args)[i], apath, &a));
      if (seen & (1u << a.index)) {
        return InvalidArgument(apath + ".index", "argument " + std::to_string(a.index) +
                                                     " is already compared in this rule (one comparison "
                                                     "per argument; use several rules for OR)");
      }
      seen |= 1u << a.index;
      out->args.push_back(a);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Action::to_string() const {
  switch (kind) {
    case Kind::kAllow: return "allow";
    case Kind::kErrno: return "errno:" + std::to_string(errno_value);
    case Kind::kKill: return "kill";
    case Kind::kLog: return "log";
  }
  return "?";
}

StatusOr<Action> parse_action(const std::string& text, const std::string& field) {
  if (text == "allow") return Action{Action::Kind::kAllow, 0};
  if (text == "kill") return Action{Action::Kind::kKill, 0};
  if (text == "log") return Action{Action::Kind::kLog, 0};
  if (text.rfind("errno:", 0) == 0) {
    const std::string e = text.substr(6);
    for (const auto& n : kErrnoNames) {
      if (e == n.name) return Action{Action::Kind::kErrno, n.value};
    }
    if (!e.empty() && e.size() <= 4 && e.find_first_not_of("0123456789") == std::string::npos) {
      int n = std::stoi(e);
      if (n >= 1 && n <= kMaxErrno) return Action{Action::Kind::kErrno, n};
      return InvalidArgument(field, "errno number must be between 1 and " + std::to_string(kMaxErrno));
    }
    return InvalidArgument(field, "unknown errno \"" + e + "\" (use a name like EPERM or a number)");
  }
  return InvalidArgument(field, "unknown action \"" + text +
                                    "\" (expected allow, errno:NAME, errno:NUMBER, kill or log)");
}

const char* arg_op_name(ArgOp op) {
  for (const auto& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}

bool Profile::uses_notify() const {
  if (default_action.kind == Action::Kind::kKill || bad_arch_action.kind == Action::Kind::kKill) return true;
  for (const auto& r : rules) {
    if (r.action.kind == Action::Kind::kKill) return true;
  }
  return false;
}

StatusOr<Profile> parse_profile(const nlohmann::json& j) {
  Profile p;
  JsonFields f(j, "");
  std::string default_action, bad_arch_action;
  f.string("name", &p.name);
  f.string("comment", &p.comment);
  f.string("default_action", &default_action);
  f.string("bad_arch_action", &bad_arch_action);
  const nlohmann::json* rules = f.child("rules");
  RETURN_IF_ERROR(f.finish());

  if (!j.contains("name")) return InvalidArgument("name", "is required");
  if (!valid_profile_name(p.name)) {
    return InvalidArgument("name", "must be 1-64 characters of letters, digits, '_', '-' or '.'");
  }
  if (!j.contains("default_action")) return InvalidArgument("default_action", "is required");
  ASSIGN_OR_RETURN(p.default_action, parse_action(default_action, "default_action"));
  if (j.contains("bad_arch_action")) {
    ASSIGN_OR_RETURN(p.bad_arch_action, parse_action(bad_arch_action, "bad_arch_action"));
    if (p.bad_arch_action.kind == Action::Kind::kAllow || p.bad_arch_action.kind == Action::Kind::kLog) {
      return InvalidArgument("bad_arch_action",
                             "must not let foreign-ABI syscalls through (use kill or errno:NAME)");
    }
  }
  if (!rules || rules->is_null()) return InvalidArgument("rules", "is required");
  if (!rules->is_array()) {
    return InvalidArgument("rules", std::string("must be an array, got ") + json_type_phrase(*rules));
  }
  for (size_t i = 0; i < rules->size(); ++i) {
    Rule r;
    RETURN_IF_ERROR(parse_rule((*rules)[i], "rules[" + std::to_string(i) + "]", &r));
    p.rules.push_back(std::move(r));
  }
  return p;
}

nlohmann::json profile_to_json(const Profile& p, bool with_comments) {
  nlohmann::json out = nlohmann::json::object();
  out["name"] = p.name;
  if (with_comments && !p.comment.empty()) out["comment"] = p.comment;
  out["default_action"] = p.default_action.to_string();
  out["bad_arch_action"] = p.bad_arch_action.to_string();
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : p.rules) {
    nlohmann::json jr = nlohmann::json::object();
    jr["names"] = r.names;
    jr["action"] = r.action.to_string();
    if (r.optional) jr["optional"] = true;
    if (with_comments && !r.comment.empty()) jr["comment"] = r.comment;
    if (!r.args.empty()) {
      nlohmann::json args = nlohmann::json::array();
      for (const auto& a : r.args) {
        nlohmann::json ja = {{"index", a.index}, {"op", arg_op_name(a.op)}, {"value", a.value}};
        if (a.op == ArgOp::kMaskedEq) ja["mask"] = a.mask;
        args.push_back(std::move(ja));
      }
      jr["args"] = std::move(args);
    }
    rules.push_back(std::move(jr));
  }
  out["rules"] = std::move(rules);
  return out;
}

}  // namespace corral::seccomp
