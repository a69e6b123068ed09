// SecurityPolicy: code is scanned BEFORE it runs, and code that violates the policy is
// refused (llm-sandbox only reports; corral enforces: a Session or `corral run` given a
// policy returns status policy_violation and executes nothing).
//
// A policy has a severity threshold (low < medium < high < critical: a finding at or above
// the threshold refuses the code), regex patterns, restricted modules per language (turned
// into that language's import forms by module_rules.h: python `import x` / `from x import` /
// `__import__('x')` / import_module('x'); javascript require / import ... from / import();
// ruby require and friends; r library()/require() and x::; go import "x" alone or in import
// blocks; java `import x.y.*` and fully qualified x.y.Name; cpp #include <x> / "x"; bash: x as
// a command), and rules for which libraries may be installed. Presets (development,
// production, educational, data_science, web_scraping, minimal, strict; presets.cc) follow
// llm-sandbox's presets' intent, extended to corral's eight languages. Policies are JSON
// (strict: unknown keys are rejected and errors name the field); `"extends": "<preset>"`
// starts from a preset and adds to its patterns and modules.
//
// Matching happens on code_text.h's views: comments and string-literal contents are
// stripped first, so `# import os` or print("import os") match nothing. Each pattern has a
// scope saying what it may see:
//   "code"              (default) comments and string literals stripped;
//   "code_and_strings"  comments stripped, string contents visible, and the match must
//                       START in code — for rules about a call's literal arguments
//                       (open(p, 'w'), exec('rm ...')) and the module forms that name the
//                       module in a string: require('x'), __import__('x'), #include "x";
//   "text"              comments stripped, the match may start anywhere, inside a string
//                       too — for things dangerous wherever they appear ("rm -rf /",
//                       "/etc/shadow", "/dev/tcp/", '__builtins__').
// In bash nothing is a string literal (strings are code there), so every scope sees them.
// Runs of whitespace (blanked comments and strings included) are squeezed before matching
// and python import lists and go import blocks are parsed, not matched, so padding cannot
// push a module out of reach; otherwise a match longer than pattern_scan.h's kMaxMatch
// (1024 bytes, e.g. `open(` with 2 KB of literal arguments before 'w') may be missed. Patterns
// are ECMAScript std::regex; a scan that exceeds scan_budget_ms refuses the code.
//
// THIS IS ADVISORY DEFENCE IN DEPTH, NOT THE SECURITY BOUNDARY. Static pattern matching is
// defeated by code that computes names at run time (getattr(__builtins__, 'ev'+'al'),
// importlib.import_module('o'+'s'), exec(base64.b64decode(...)), c''url in a shell, C
// token pasting), and such tricks cannot be enumerated. The presets catch the common
// idioms through broader rules (dynamic import of a computed name, introspection dunders,
// namespace lookups, eval/exec anywhere in strict), and the scanner reports what it cannot
// see through (evasions: a Python source encoding like UTF-7, NFKC-folded non-ASCII
// identifiers, JavaScript \u escapes in identifiers) — but what keeps the host safe is the
// kernel isolation underneath: namespaces, seccomp, cgroups, no network unless allowed.
// tests/unit/security_policy_test.cc (KnownBypasses) records which tricks are caught.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral::security {

enum class Severity : int { kLow = 1, kMedium = 2, kHigh = 3, kCritical = 4 };
const char* severity_name(Severity s);  // "low", "medium", "high", "critical"

enum class Scope { kCode, kCodeAndStrings, kText };
const char* scope_name(Scope s);  // "code", "code_and_strings", "text"

struct SecurityPattern {
  std::string pattern;  // ECMAScript regex (std::regex), multiline: ^ and $ match at lines
  std::string description;
  Severity severity = Severity::kMedium;
  std::vector<std::string> languages;  // canonical names; empty: every language
  Scope scope = Scope::kCode;
  int report_group = 0;  // the capture group whose position is reported (0: the match)
  bool operator==(const SecurityPattern&) const = default;
};

struct RestrictedModule {
  // python "os" (also os.path), javascript "child_process" (also node:child_process,
  // child_process/x), java "java.net", cpp "sys/socket.h", go "os/exec", r "processx",
  // ruby "net/http", bash "curl" (a command). Submodules are included.
  std::string name;
  std::string description;
  Severity severity = Severity::kMedium;
  bool operator==(const RestrictedModule&) const = default;
};

// Library install rules: shell-style globs (fnmatch). A glob with a '/' is matched against
// the whole (lexically normalised) path; one without against the last path component and
// against the name before any version specifier ("requests" matches "requests==2.31").
// Blocked wins; when `allowed` is non-empty, everything else is refused.
struct LibraryRules {
  std::vector<std::string> allowed;
  std::vector<std::string> blocked;
  bool operator==(const LibraryRules&) const = default;
};

struct CompiledRules;

class SecurityPolicy {
 public:
  std::string name = "custom";
  std::string description;
  Severity severity_threshold = Severity::kLow;
  bool evasion_checks = true;  // report code the scanner provably cannot see through
  // A scan that takes longer refuses the code (fail closed). Presets' rules scan megabytes
  // in well under a second; a custom pattern with nested quantifiers might not.
  uint64_t scan_budget_ms = 2000;
  std::vector<SecurityPattern> patterns;
  std::map<std::string, std::vector<RestrictedModule>> restricted_modules;  // by canonical language
  LibraryRules libraries;

  // development, production, educational, data_science, web_scraping, minimal, strict.
  static StatusOr<SecurityPolicy> preset(const std::string& name);
  static const std::vector<std::string>& preset_names();
  static StatusOr<SecurityPolicy> from_json(const nlohmann::json& j);
  static StatusOr<SecurityPolicy> from_json_text(const std::string& text);
  static StatusOr<SecurityPolicy> from_file(const std::string& path);
  // A preset name, else a JSON file path.
  static StatusOr<SecurityPolicy> load(const std::string& preset_or_file);
  nlohmann::json to_json() const;

  // Validates and compiles the regexes (from_json and preset do it). A policy edited by
  // hand afterwards is recompiled by scan() on the fly (the compiled form remembers what
  // it was compiled from), so editing fields is always safe, just slower until compile().
  Status compile();

 private:
  friend struct ScanAccess;
  std::shared_ptr<const CompiledRules> compiled_;
};

struct Violation {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in characters
  std::string kind;  // "pattern", "module", "evasion", "policy"
  std::string rule;  // the regex, the module name, or the evasion check
  std::string description;
  Severity severity = Severity::kLow;
  bool blocking = false;  // severity at or above the policy's threshold
  std::string excerpt;    // the source line of the finding (trimmed, at most 80 characters)
};

struct ScanReport {
  bool allowed = true;
  std::string policy;    // the policy's name
  std::string language;  // canonical
  Severity threshold = Severity::kLow;
  std::vector<Violation> violations;  // by line, then column
  bool truncated = false;             // more findings than reported

  nlohmann::json to_json() const;
  // One line for ExecResult.message: "refused by security policy 'strict': 3 blocking
  // findings: line 1:1 module 'subprocess' (Subprocess management, high); ...".
  std::string summary() const;
  // The report for people: a header line, then one line per finding ("file:line:col ...").
  std::string to_text(const std::string& file_name = "") const;
};

// `language` may be any name or alias find_language knows ("py", "node", "c++", ...).
// An unknown language is scanned unstripped, with only the language-independent patterns.
ScanReport scan(const SecurityPolicy& policy, const std::string& language, const std::string& code);

// OK, or InvalidArgument naming "libraries[i]" and the rule that refused it.
Status check_libraries(const SecurityPolicy& policy, const std::vector<std::string>& libraries);

}  // namespace corral::security
