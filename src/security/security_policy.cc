#include "src/security/security_policy.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "src/core/json_fields.h"
#include "src/lang/language.h"
#include "src/security/code_text.h"
#include "src/security/module_rules.h"
#include "src/security/pattern_scan.h"

namespace corral::security {

struct CompiledRule {
  ScanRegex re;
  int group = 0;
  Scope scope = Scope::kCode;
  std::vector<std::string> languages;  // empty: all
  std::string kind;                    // "pattern" or "module"
  std::vector<RestrictedModule> modules;  // module rules: the language's restricted modules
  std::string rule;
  std::string description;
  Severity severity = Severity::kLow;
};

// What a policy compiles to, with the fields it was compiled from (to notice later edits).
struct CompiledRules {
  std::vector<SecurityPattern> patterns;
  std::map<std::string, std::vector<RestrictedModule>> modules;
  std::vector<CompiledRule> rules;
  std::map<std::string, std::vector<RestrictedModule>> by_language;  // canonical names
};

struct ScanAccess {
  static std::shared_ptr<const CompiledRules> rules(const SecurityPolicy& p) { return p.compiled_; }
};

namespace {

constexpr size_t kMaxPerRule = 20;
constexpr size_t kMaxFindings = 200;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

StatusOr<Severity> parse_severity(const std::string& text, const std::string& field) {
  std::string s = lower(text);
  if (s == "low") return Severity::kLow;
  if (s == "medium") return Severity::kMedium;
  if (s == "high") return Severity::kHigh;
  if (s == "critical") return Severity::kCritical;
  return InvalidArgument(field, "must be one of low, medium, high, critical, got '" + text + "'");
}

StatusOr<std::string> canonical_language(const std::string& name, const std::string& field) {
  const lang::LanguageHandler* h = lang::find_language(name);
  if (!h) return InvalidArgument(field, "unknown language '" + name + "' (one of: " + lang::language_names() + ")");
  return std::string(h->name());
}

// --- JSON -------------------------------------------------------------------------------

StatusOr<Scope> parse_scope(const std::string& s, const std::string& field) {
  if (s == "code") return Scope::kCode;
  if (s == "code_and_strings") return Scope::kCodeAndStrings;
  if (s == "text") return Scope::kText;
  return InvalidArgument(field, "must be one of code, code_and_strings, text, got '" + s + "'");
}

StatusOr<SecurityPattern> parse_pattern(const nlohmann::json& e, const std::string& field) {
  JsonFields f(e, field);
  SecurityPattern p;
  std::string severity, scope;
  uint64_t group = 0;
  f.string("pattern", &p.pattern);
  f.string("description", &p.description);
  f.string("severity", &severity);
  f.string_list("languages", &p.languages);
  f.string("scope", &scope);
  f.u64("report_group", &group, 0, 99);
  RETURN_IF_ERROR(f.finish());
  if (p.pattern.empty()) return InvalidArgument(field + ".pattern", "is required (a regular expression)");
  if (p.description.empty()) return InvalidArgument(field + ".description", "is required");
  if (severity.empty()) return InvalidArgument(field + ".severity", "is required (low, medium, high or critical)");
  ASSIGN_OR_RETURN(p.severity, parse_severity(severity, field + ".severity"));
  if (!scope.empty()) {
    ASSIGN_OR_RETURN(p.scope, parse_scope(scope, field + ".scope"));
  }
  for (size_t k = 0; k < p.languages.size(); ++k) {
    ASSIGN_OR_RETURN(p.languages[k], canonical_language(p.languages[k], field + ".languages[" + std::to_string(k) + "]"));
  }
  p.report_group = static_cast<int>(group);
  // Compiled here too, so an error names the index the user wrote (not one after a preset's).
  ASSIGN_OR_RETURN(ScanRegex re, ScanRegex::compile(p.pattern, field + ".pattern"));
  (void)re;
  return p;
}

StatusOr<RestrictedModule> parse_module(const nlohmann::json& e, const std::string& field) {
  JsonFields f(e, field);
  RestrictedModule m;
  std::string severity;
  f.string("name", &m.name);
  f.string("description", &m.description);
  f.string("severity", &severity);
  RETURN_IF_ERROR(f.finish());
  if (m.name.empty()) return InvalidArgument(field + ".name", "is required");
  if (!valid_module_name(m.name)) {
    return InvalidArgument(field + ".name", "'" + m.name + "' is not a module name (letters, digits and _ . - / + @ :)");
  }
  if (severity.empty()) return InvalidArgument(field + ".severity", "is required (low, medium, high or critical)");
  ASSIGN_OR_RETURN(m.severity, parse_severity(severity, field + ".severity"));
  if (m.description.empty()) m.description = "restricted module";
  return m;
}

// --- Reports ----------------------------------------------------------------------------

std::string excerpt_of(const std::string& input, size_t begin, size_t end) {
  begin = std::min(begin, input.size());
  end = std::clamp(end, begin, input.size());
  std::string s = input.substr(begin, end - begin);
  s = s.substr(0, s.find_first_of("\r\n"));
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  s = s.substr(a, s.find_last_not_of(" \t") + 1 - a);
  if (s.size() > 80) {
    size_t cut = 77;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string finding_phrase(const Violation& v) {
  std::string s = std::to_string(v.line) + ":" + std::to_string(v.column) + " ";
  if (v.kind == "module") s += "module '" + v.rule + "': ";
  return s + v.description + " (" + severity_name(v.severity) + ")";
}

}  // namespace

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
    case Severity::kCritical: return "critical";
  }
  return "low";
}

const char* scope_name(Scope s) {
  switch (s) {
    case Scope::kCode: return "code";
    case Scope::kCodeAndStrings: return "code_and_strings";
    case Scope::kText: return "text";
  }
  return "code";
}

Status SecurityPolicy::compile() {
  auto c = std::make_shared<CompiledRules>();
  c->patterns = patterns;
  c->modules = restricted_modules;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const SecurityPattern& p = patterns[i];
    const std::string field = "patterns[" + std::to_string(i) + "]";
    if (p.description.empty()) return InvalidArgument(field + ".description", "is required");
    CompiledRule r;
    ASSIGN_OR_RETURN(r.re, ScanRegex::compile(p.pattern, field + ".pattern"));
    if (p.report_group < 0 || static_cast<size_t>(p.report_group) > r.re.groups()) {
      return InvalidArgument(field + ".report_group", "the pattern has only " + std::to_string(r.re.groups()) + " groups");
    }
    for (size_t k = 0; k < p.languages.size(); ++k) {
      ASSIGN_OR_RETURN(std::string l, canonical_language(p.languages[k], field + ".languages[" + std::to_string(k) + "]"));
      r.languages.push_back(l);
    }
    r.group = p.report_group;
    r.scope = p.scope;
    r.kind = "pattern";
    r.rule = p.pattern;
    r.description = p.description;
    r.severity = p.severity;
    c->rules.push_back(std::move(r));
  }
  for (const auto& [language, mods] : restricted_modules) {
    ASSIGN_OR_RETURN(std::string l, canonical_language(language, "restricted_modules." + language));
    std::vector<std::string> names;
    for (size_t i = 0; i < mods.size(); ++i) {
      if (!valid_module_name(mods[i].name)) {
        return InvalidArgument("restricted_modules." + language + "[" + std::to_string(i) + "].name",
                               "'" + mods[i].name + "' is not a module name");
      }
      names.push_back(mods[i].name);
    }
    if (names.empty()) continue;
    auto& all = c->by_language[l];
    all.insert(all.end(), mods.begin(), mods.end());
    for (const ModuleForm& form : module_forms(l, names)) {
      CompiledRule r;
      ASSIGN_OR_RETURN(r.re, ScanRegex::compile(form.regex, "restricted_modules." + language));
      r.group = form.report_module ? 1 : 0;
      r.scope = form.scope;
      r.languages = {l};
      r.kind = "module";
      r.modules = mods;
      c->rules.push_back(std::move(r));
    }
  }
  compiled_ = std::move(c);
  return Status::Ok();
}

StatusOr<SecurityPolicy> SecurityPolicy::from_json(const nlohmann::json& j) {
  JsonFields f(j, "");
  SecurityPolicy p;
  std::string extends, threshold;
  f.string("extends", &extends);
  if (!extends.empty()) {
    auto base = preset(extends);
    if (!base.ok()) return InvalidArgument("extends", base.status().message());
    p = std::move(base).value();
    p.description.clear();
  }
  f.string("name", &p.name);
  f.string("description", &p.description);
  f.string("severity_threshold", &threshold);
  f.boolean("evasion_checks", &p.evasion_checks);
  f.u64("scan_budget_ms", &p.scan_budget_ms, 1, 600'000);
  if (!threshold.empty()) {
    ASSIGN_OR_RETURN(p.severity_threshold, parse_severity(threshold, "severity_threshold"));
  }
  if (const nlohmann::json* v = f.child("patterns")) {
    if (!v->is_array()) {
      return InvalidArgument("patterns", std::string("must be an array of objects, got ") + json_type_phrase(*v));
    }
    for (size_t i = 0; i < v->size(); ++i) {
      ASSIGN_OR_RETURN(SecurityPattern sp, parse_pattern((*v)[i], "patterns[" + std::to_string(i) + "]"));
      p.patterns.push_back(std::move(sp));
    }
  }
  if (const nlohmann::json* v = f.child("restricted_modules")) {
    if (!v->is_object()) {
      return InvalidArgument("restricted_modules",
                             std::string("must be an object of arrays by language, got ") + json_type_phrase(*v));
    }
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string field = "restricted_modules." + it.key();
      ASSIGN_OR_RETURN(std::string language, canonical_language(it.key(), field));
      if (!it.value().is_array()) {
        return InvalidArgument(field, std::string("must be an array of objects, got ") + json_type_phrase(it.value()));
      }
      for (size_t i = 0; i < it.value().size(); ++i) {
        ASSIGN_OR_RETURN(RestrictedModule m, parse_module(it.value()[i], field + "[" + std::to_string(i) + "]"));
        p.restricted_modules[language].push_back(std::move(m));
      }
    }
  }
  if (const nlohmann::json* v = f.child("libraries")) {
    JsonFields lf(*v, "libraries");
    lf.string_list("allowed", &p.libraries.allowed);
    lf.string_list("blocked", &p.libraries.blocked);
    RETURN_IF_ERROR(lf.finish());
    for (const char* key : {"allowed", "blocked"}) {
      const auto& list = std::string(key) == "allowed" ? p.libraries.allowed : p.libraries.blocked;
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i].empty()) {
          return InvalidArgument("libraries." + std::string(key) + "[" + std::to_string(i) + "]", "must not be empty");
        }
      }
    }
  }
  RETURN_IF_ERROR(f.finish());
  if (p.name.empty()) return InvalidArgument("name", "must not be empty");
  RETURN_IF_ERROR(p.compile());
  return p;
}

StatusOr<SecurityPolicy> SecurityPolicy::from_json_text(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("security_policy", "is not valid JSON");
  return from_json(j);
}

StatusOr<SecurityPolicy> SecurityPolicy::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return SysError("cannot read security policy file", errno, path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path, "security policy file is not valid JSON");
  return from_json(j);
}

StatusOr<SecurityPolicy> SecurityPolicy::load(const std::string& preset_or_file) {
  const auto& names = preset_names();
  if (std::find(names.begin(), names.end(), preset_or_file) != names.end()) return preset(preset_or_file);
  std::error_code ec;
  if (!std::filesystem::exists(preset_or_file, ec) && preset_or_file.find('/') == std::string::npos &&
      preset_or_file.find(".json") == std::string::npos) {
    return InvalidArgument(preset_or_file, "is neither a preset (" + join(names, ", ") + ") nor a policy file");
  }
  return from_file(preset_or_file);
}

nlohmann::json SecurityPolicy::to_json() const {
  nlohmann::json pats = nlohmann::json::array();
  for (const auto& p : patterns) {
    nlohmann::json e = {{"pattern", p.pattern}, {"description", p.description}, {"severity", severity_name(p.severity)}};
    if (!p.languages.empty()) e["languages"] = p.languages;
    if (p.scope != Scope::kCode) e["scope"] = scope_name(p.scope);
    if (p.report_group) e["report_group"] = p.report_group;
    pats.push_back(std::move(e));
  }
  nlohmann::json mods = nlohmann::json::object();
  for (const auto& [language, list] : restricted_modules) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& m : list) {
      a.push_back({{"name", m.name}, {"description", m.description}, {"severity", severity_name(m.severity)}});
    }
    mods[language] = std::move(a);
  }
  return {{"name", name},
          {"description", description},
          {"severity_threshold", severity_name(severity_threshold)},
          {"evasion_checks", evasion_checks},
          {"scan_budget_ms", scan_budget_ms},
          {"patterns", std::move(pats)},
          {"restricted_modules", std::move(mods)},
          {"libraries", {{"allowed", libraries.allowed}, {"blocked", libraries.blocked}}}};
}

ScanReport scan(const SecurityPolicy& policy, const std::string& language, const std::string& code) {
  ScanReport report;
  report.policy = policy.name;
  report.threshold = policy.severity_threshold;
  const lang::LanguageHandler* h = lang::find_language(language);
  report.language = h ? std::string(h->name()) : lower(language);

  std::shared_ptr<const CompiledRules> rules = ScanAccess::rules(policy);
  if (!rules || rules->patterns != policy.patterns || rules->modules != policy.restricted_modules) {
    SecurityPolicy copy = policy;
    Status s = copy.compile();
    if (!s.ok()) {  // fail closed
      report.allowed = false;
      report.violations.push_back(
          {1, 1, "policy", "", "the security policy is invalid: " + s.to_string(), Severity::kCritical, true, ""});
      return report;
    }
    rules = ScanAccess::rules(copy);
  }

  const CodeText ct = strip_code(report.language, code);
  const LineIndex lines(code);
  std::vector<Violation> found;
  auto add = [&](size_t at, const std::string& kind, const std::string& rule,
                 const std::string& description, Severity severity) {
    Violation v;
    LineIndex::Position pos = lines.at(ct.input_offset(at));
    v.line = pos.line;
    v.column = pos.column;
    v.kind = kind;
    v.rule = rule;
    v.description = description;
    v.severity = severity;
    v.blocking = severity >= policy.severity_threshold;
    size_t at_input = ct.input_offset(at);
    size_t line_start = code.rfind('\n', at_input == 0 ? 0 : at_input - 1);
    line_start = (line_start == std::string::npos || at_input == 0) ? 0 : line_start + 1;
    bool cut = false;
    if (at_input - line_start > 40) {  // a long line: show the part around the finding
      line_start = at_input - 20;
      while (line_start > 0 && (static_cast<unsigned char>(code[line_start]) & 0xC0) == 0x80) --line_start;
      cut = true;
    }
    v.excerpt = (cut ? "..." : "") + excerpt_of(code, line_start, code.find('\n', at_input));
    found.push_back(std::move(v));
  };

  // Whitespace runs (comments and string contents are blanked to spaces, so padding lands
  // here too) are squeezed before matching, so padding cannot stretch a match past the
  // windowing limit; `map` leads back to view offsets.
  struct Squeezed {
    std::string s;
    std::vector<size_t> map;  // s index -> view index; map[s.size()] == view.size()
  };
  auto squeeze = [](const std::string& v) {
    Squeezed q;
    q.s.reserve(v.size());
    q.map.reserve(v.size() + 1);
    auto keep = [&](size_t i) {
      q.s += v[i];
      q.map.push_back(i);
    };
    for (size_t i = 0; i < v.size();) {
      if (!std::isspace(static_cast<unsigned char>(v[i]))) {
        keep(i++);
        continue;
      }
      size_t j = i, newline = std::string::npos;
      for (; j < v.size() && std::isspace(static_cast<unsigned char>(v[j])); ++j) {
        if (v[j] == '\n' && newline == std::string::npos) newline = j;
      }
      if (j - i <= 3) {
        for (size_t k = i; k < j; ++k) keep(k);
      } else {  // first, a newline if there is one, last
        keep(i);
        if (newline != std::string::npos && newline != i && newline != j - 1) keep(newline);
        keep(j - 1);
      }
      i = j;
    }
    q.map.push_back(v.size());
    return q;
  };
  const Squeezed code_view = squeeze(ct.code), text_view = squeeze(ct.text);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(policy.scan_budget_ms);
  for (const CompiledRule& r : rules->rules) {
    if (!r.languages.empty() &&
        std::find(r.languages.begin(), r.languages.end(), report.language) == r.languages.end()) {
      continue;
    }
    const Squeezed& view = r.scope == Scope::kCode ? code_view : text_view;
    size_t count = 0;
    ScanRegex::Outcome outcome = r.re.for_each_match(
        view.s, r.group,
        [&](const ScanRegex::Match& m) {
          const size_t begin = view.map[m.begin], at = view.map[m.report];
          if (r.scope == Scope::kCodeAndStrings && !ct.is_code(begin)) return true;
          if (r.kind == "module") {
            if (m.group1_begin == std::string::npos) return true;
            const RestrictedModule* mod =
                match_module(r.modules, view.s.substr(m.group1_begin, m.group1_end - m.group1_begin));
            if (mod) add(at, r.kind, mod->name, mod->description, mod->severity);
          } else {
            add(at, r.kind, r.rule, r.description, r.severity);
          }
          return ++count < kMaxPerRule;
        },
        deadline);
    if (count >= kMaxPerRule) report.truncated = true;
    if (outcome != ScanRegex::Outcome::kDone) {  // fail closed
      Severity worst = r.severity;
      for (const auto& mod : r.modules) worst = std::max(worst, mod.severity);
      if (outcome == ScanRegex::Outcome::kTimedOut) {
        add(0, "policy", r.kind == "module" ? "restricted_modules" : r.rule,
            "the scan took longer than " + std::to_string(policy.scan_budget_ms) + " ms (scan_budget_ms); refused",
            Severity::kCritical);
        break;
      }
      add(0, r.kind, r.rule, r.description + " (the regex engine gave up on this code; treated as a match)", worst);
    }
  }
  if (auto it = rules->by_language.find(report.language); it != rules->by_language.end()) {
    std::map<std::string, size_t> per_module;
    for (const ImportName& imp : parsed_imports(ct)) {
      const RestrictedModule* mod = match_module(it->second, imp.name);
      if (!mod) continue;
      if (++per_module[mod->name] > kMaxPerRule) {
        report.truncated = true;
        continue;
      }
      add(imp.pos, "module", mod->name, mod->description, mod->severity);
    }
  }
  if (policy.evasion_checks) {
    for (const Evasion& e : ct.evasions) {
      add(e.offset, "evasion", "scanner-evasion", e.message,
          e.critical ? Severity::kCritical : Severity::kHigh);
    }
  }

  std::stable_sort(found.begin(), found.end(), [](const Violation& a, const Violation& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  // One finding per module per line (the import and qualified-name forms overlap), and no
  // exact duplicates.
  std::vector<Violation> out;
  std::set<std::tuple<std::string, std::string, int, int>> seen;
  for (auto& v : found) {
    if (!seen.emplace(v.kind, v.rule, v.line, v.kind == "module" ? 0 : v.column).second) continue;
    if (out.size() >= kMaxFindings) {
      report.truncated = true;
      break;
    }
    out.push_back(std::move(v));
  }
  report.violations = std::move(out);
  report.allowed = std::none_of(report.violations.begin(), report.violations.end(),
                                [](const Violation& v) { return v.blocking; });
  return report;
}

nlohmann::json ScanReport::to_json() const {
  nlohmann::json vs = nlohmann::json::array();
  for (const auto& v : violations) {
    vs.push_back({{"line", v.line},
                  {"column", v.column},
                  {"kind", v.kind},
                  {"rule", v.rule},
                  {"description", v.description},
                  {"severity", severity_name(v.severity)},
                  {"blocking", v.blocking},
                  {"excerpt", v.excerpt}});
  }
  return {{"allowed", allowed},
          {"policy", policy},
          {"language", language},
          {"threshold", severity_name(threshold)},
          {"truncated", truncated},
          {"violations", std::move(vs)}};
}

std::string ScanReport::summary() const {
  std::vector<const Violation*> blocking;
  for (const auto& v : violations) {
    if (v.blocking) blocking.push_back(&v);
  }
  if (allowed) {
    std::string s = "allowed by security policy '" + policy + "'";
    if (!violations.empty()) {
      s += " (" + std::to_string(violations.size()) + " finding" + (violations.size() == 1 ? "" : "s") +
           " below the '" + severity_name(threshold) + "' threshold)";
    }
    return s;
  }
  std::string s = "refused by security policy '" + policy + "': " + std::to_string(blocking.size()) +
                  " blocking finding" + (blocking.size() == 1 ? "" : "s") + (truncated ? " or more" : "") + ": ";
  for (size_t i = 0; i < blocking.size() && i < 3; ++i) s += (i ? "; line " : "line ") + finding_phrase(*blocking[i]);
  if (blocking.size() > 3) s += "; +" + std::to_string(blocking.size() - 3) + " more";
  return s;
}

std::string ScanReport::to_text(const std::string& file_name) const {
  size_t nblocking = std::count_if(violations.begin(), violations.end(), [](const Violation& v) { return v.blocking; });
  std::string out = std::string(allowed ? "allowed" : "REFUSED") + " by security policy '" + policy + "' (" +
                    language + ", threshold " + severity_name(threshold) + "): ";
  out += violations.empty() ? "no findings"
                            : std::to_string(violations.size()) + " finding" + (violations.size() == 1 ? "" : "s") +
                                  ", " + std::to_string(nblocking) + " blocking";
  out += truncated ? " (truncated)\n" : "\n";
  const std::string prefix = file_name.empty() ? "" : file_name + ":";
  for (const auto& v : violations) {
    out += prefix + std::to_string(v.line) + ":" + std::to_string(v.column) + ": " + severity_name(v.severity) +
           (v.blocking ? ", blocking" : "") + ": ";
    if (v.kind == "module") out += "module '" + v.rule + "': ";
    out += v.description;
    if (v.kind == "pattern") out += "  [/" + v.rule + "/]";
    out += "\n";
    if (!v.excerpt.empty()) out += "    | " + v.excerpt + "\n";
  }
  return out;
}

Status check_libraries(const SecurityPolicy& policy, const std::vector<std::string>& libraries) {
  for (size_t i = 0; i < libraries.size(); ++i) {
    const std::string field = "libraries[" + std::to_string(i) + "]";
    std::string path = std::filesystem::path(libraries[i]).lexically_normal().string();
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    const std::string name = base.substr(0, base.find_first_of("=<>!~[;@ "));
    auto matches = [&](const std::string& glob) {
      if (glob.find('/') != std::string::npos) return fnmatch(glob.c_str(), path.c_str(), 0) == 0;
      return fnmatch(glob.c_str(), base.c_str(), FNM_CASEFOLD) == 0 ||
             (!name.empty() && fnmatch(glob.c_str(), name.c_str(), FNM_CASEFOLD) == 0);
    };
    for (const auto& glob : policy.libraries.blocked) {
      if (matches(glob)) {
        return InvalidArgument(field, "'" + libraries[i] + "' is blocked by security policy '" + policy.name +
                                          "' (libraries.blocked '" + glob + "')");
      }
    }
    if (!policy.libraries.allowed.empty() &&
        std::none_of(policy.libraries.allowed.begin(), policy.libraries.allowed.end(), matches)) {
      return InvalidArgument(field, "'" + libraries[i] + "' is not among the libraries security policy '" +
                                        policy.name + "' allows (" + join(policy.libraries.allowed, ", ") + ")");
    }
  }
  return Status::Ok();
}

}  // namespace corral::security
