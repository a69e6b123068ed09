// Seccomp profiles as data: the JSON format, strict parsing, and the canonical form that the
// compiled filter's digest is computed from. Nothing here needs libseccomp; resolving syscall
// names for an architecture happens in compiler.cc.
//
// {
//   "name": "default",                  // [A-Za-z0-9_.-]{1,64}
//   "comment": "...",                   // optional, ignored
//   "default_action": "errno:EPERM",    // allow | errno:NAME | errno:N | kill | log
//   "bad_arch_action": "kill",          // optional (default kill); kill | errno:...
//   "rules": [
//     {"names": ["read", "write"], "action": "allow", "comment": "...", "optional": false,
//      "args": [{"index": 0, "op": "masked_eq", "mask": "0x7E020000", "value": 0}]}
//   ]
// }
//
// Semantics, per syscall: rules with the same action are OR-ed; the args of one rule are
// AND-ed. A rule with args is more specific than a rule without and wins over it, so
// {"names":["ioctl"],"action":"allow"} plus {"names":["ioctl"],"action":"errno:EPERM",
// "args":[TIOCSTI]} means "ioctl is allowed except TIOCSTI". Rules whose action equals
// default_action only document intent (and validate the names). Such exceptions to a rule
// without args must each be one eq/masked_eq test on the same argument (the compiler turns the
// rule into allows for every other value); conditional rules with different actions should not
// overlap (libseccomp then picks one). "kill" reports the violation to the supervisor
// (SECCOMP_RET_USER_NOTIF), which kills the sandboxed process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral::seccomp {

struct Action {
  enum class Kind { kAllow, kErrno, kKill, kLog };
  Kind kind = Kind::kAllow;
  int errno_value = 0;  // only for kErrno, 1..4095

  // Canonical spelling: "allow", "errno:1", "kill", "log".
  std::string to_string() const;
  bool operator==(const Action& o) const { return kind == o.kind && errno_value == o.errno_value; }
  bool operator!=(const Action& o) const { return !(*this == o); }
};

// Parses "allow", "kill", "log", "errno:EPERM", "errno:38". `field` names the JSON field.
StatusOr<Action> parse_action(const std::string& text, const std::string& field);

enum class ArgOp { kEq, kNe, kLt, kLe, kGt, kGe, kMaskedEq };
const char* arg_op_name(ArgOp op);

// One comparison of a syscall argument (all 64 bits unless masked).
struct ArgCheck {
  unsigned index = 0;  // 0..5
  ArgOp op = ArgOp::kEq;
  uint64_t value = 0;
  uint64_t mask = 0;  // only for kMaskedEq
};

struct Rule {
  std::vector<std::string> names;
  Action action;
  std::vector<ArgCheck> args;
  bool optional = false;  // skip names the running libseccomp/architecture does not know
  std::string comment;
};

struct Profile {
  std::string name;
  std::string comment;
  Action default_action;
  Action bad_arch_action{Action::Kind::kKill, 0};
  std::vector<Rule> rules;

  // True when any action is "kill": the filter must be loaded with a notify listener.
  bool uses_notify() const;
};

// Strict parse: unknown keys, wrong types and bad values are errors naming the dotted field
// ("rules[3].args[0].op").
StatusOr<Profile> parse_profile(const nlohmann::json& j);

// The profile back as JSON. With `with_comments` false this is the canonical form (sorted keys,
// numbers for errno values, masks only where used) that digests are computed from.
nlohmann::json profile_to_json(const Profile& p, bool with_comments = true);

}  // namespace corral::seccomp
