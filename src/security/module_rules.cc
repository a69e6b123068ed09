#include "src/security/module_rules.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace corral::security {
namespace {

std::string rx_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::strchr("\\^$.|?*+()[]{}", c)) out += '\\';
    out += c;
  }
  return out;
}

// "os.path" as it may be written in code: `os . path` is legal Python and Java.
std::string rx_dotted(const std::string& s) {
  std::string out;
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    out += rx_escape(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    out += R"(\s*\.\s*)";
    start = dot + 1;
  }
  return out;
}

bool is_ident(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }
bool is_space(unsigned char c) { return std::isspace(c) != 0; }

// Every `import` keyword of the code view: the first index after it.
template <typename Fn>
void each_import_keyword(const std::string& v, Fn fn) {
  for (size_t p = v.find("import"); p != std::string::npos; p = v.find("import", p + 1)) {
    if ((p > 0 && is_ident(v[p - 1])) || (p + 6 < v.size() && is_ident(v[p + 6]))) continue;
    fn(p + 6);
  }
}

void python_imports(const std::string& v, std::vector<ImportName>* out) {
  const size_t n = v.size();
  each_import_keyword(v, [&](size_t i) {
    auto ws = [&] {
      while (i < n && is_space(v[i])) ++i;
    };
    ws();
    if (i < n && v[i] == '(') ++i, ws();
    for (;;) {  // dotted names separated by commas, each maybe `as alias`
      const size_t start = i;
      std::string name;
      for (;;) {
        size_t s = i;
        while (i < n && is_ident(v[i])) ++i;
        if (i == s) break;
        name.append(v, s, i - s);
        size_t after = i;
        ws();
        if (i < n && v[i] == '.') {
          ++i, ws();
          name += '.';
          continue;
        }
        i = after;
        break;
      }
      if (name.empty() || name.back() == '.') break;
      out->push_back({start, name});
      ws();
      if (v.compare(i, 2, "as") == 0 && i + 2 < n && !is_ident(v[i + 2])) {
        i += 2, ws();
        while (i < n && is_ident(v[i])) ++i;
        ws();
      }
      if (i < n && v[i] == ',') {
        ++i, ws();
        continue;
      }
      break;
    }
  });
}

// import "p" | import alias "p" | import ( spec; spec ... ). Paths are read from the text
// view: the code view blanks string contents but keeps the quotes.
void go_imports(const std::string& code, const std::string& text, std::vector<ImportName>* out) {
  const size_t n = code.size();
  each_import_keyword(code, [&](size_t i) {
    auto ws = [&] {
      while (i < n && (is_space(code[i]) || code[i] == ';')) ++i;
    };
    auto spec = [&]() -> bool {
      ws();
      if (i < n && (is_ident(code[i]) || code[i] == '.')) {  // alias, '.' or '_'
        if (code[i] == '.') ++i;
        else while (i < n && is_ident(code[i])) ++i;
        ws();
      }
      if (i >= n || (code[i] != '"' && code[i] != '`')) return false;
      size_t close = code.find(code[i], i + 1);
      if (close == std::string::npos) return false;
      out->push_back({i + 1, text.substr(i + 1, close - i - 1)});
      i = close + 1;
      return true;
    };
    ws();
    if (i < n && code[i] == '(') {
      ++i;
      for (;;) {
        ws();
        if (i >= n || code[i] == ')' || !spec()) break;
      }
    } else {
      spec();
    }
  });
}

}  // namespace

std::vector<ModuleForm> module_forms(const std::string& lang, const std::vector<std::string>& names) {
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  std::string m = "(", md = "(";  // as written inside strings, and in code (`os . path`)
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i) m.push_back('|'), md.push_back('|');
    m.append(rx_escape(sorted[i]));
    md.append(rx_dotted(sorted[i]));
  }
  m.push_back(')');
  md.push_back(')');
  const Scope code = Scope::kCode, cs = Scope::kCodeAndStrings;
  if (lang == "python") {  // plus the parsed `import a, b` lists
    return {
        {R"(\bfrom\s+)" + md + R"((?:\s*\.|\s+import\b))", true, code},
        {R"(\b(?:__import__|import_module)\s*\(\s*(?:name\s*=\s*)?[rRuU]?(?:'''|"""|'|"))" + m + R"((?![\w]))", false, cs},
    };
  }
  if (lang == "javascript") {
    return {
        {R"(\brequire\s*\(\s*['"`](?:node:)?)" + m + R"((?=['"`/]))", false, cs},
        // import x from 'm' | import 'm' | export ... from 'm': `from` or `import` then the string
        {R"(\b(?:from|import)\s*['"](?:node:)?)" + m + R"((?=['"/]))", false, cs},
        {R"(\bimport\s*\(\s*['"`](?:node:)?)" + m + R"((?=['"`/]))", false, cs},
    };
  }
  if (lang == "ruby") {
    return {{R"(\b(?:require|require_relative|load|autoload)\b\s*\(?\s*(?::\w+\s*,\s*)?(?:['"]|%[qQ]?[(\[{<|!]))" + m +
                 R"((?=['"/)\]}>|!]|\.rb\b|\.so\b))",
             false, cs}};
  }
  if (lang == "r") {
    return {
        {R"(\b(?:library|require|requireNamespace|loadNamespace|attachNamespace)\s*\(\s*(?:package\s*=\s*)?['"]?)" + m +
             R"((?![\w.]))",
         false, cs},
        {R"((?:^|[^\w.]))" + m + R"(:::?)", true, code},
    };
  }
  if (lang == "java") {
    return {
        {R"(\bimport\s+(?:static\s+)?)" + md + R"(\s*[.;])", false, code},
        {R"((?:^|[^\w.]))" + md + R"(\s*\.\s*[A-Za-z_$])", true, code},
    };
  }
  if (lang == "cpp") {
    return {{R"((?:#|%:)\s*(?:include|include_next|import)\s*[<"]\s*)" + m +
                 R"((?:\.(?:h|hh|hpp|hxx))?(?:[>"]|/[^>"\n]*[>"]))",
             false, cs}};
  }
  if (lang == "bash") {
    return {{R"((?:^|[^\w./$-])(?:[\w./-]*/)?)" + m + R"((?![\w.-]))", true, code}};
  }
  return {};  // go: parsed only
}

std::vector<ImportName> parsed_imports(const CodeText& ct) {
  std::vector<ImportName> out;
  if (ct.language == "python") python_imports(ct.code, &out);
  else if (ct.language == "go") go_imports(ct.code, ct.text, &out);
  return out;
}

const RestrictedModule* match_module(const std::vector<RestrictedModule>& modules, std::string written) {
  written.erase(std::remove_if(written.begin(), written.end(), [](unsigned char c) { return std::isspace(c); }),
                written.end());
  const RestrictedModule* best = nullptr;
  for (const auto& m : modules) {
    bool hit = written == m.name || (written.size() > m.name.size() && written.compare(0, m.name.size(), m.name) == 0 &&
                                     (written[m.name.size()] == '.' || written[m.name.size()] == '/'));
    if (hit && (!best || m.name.size() > best->name.size())) best = &m;
  }
  return best;
}

bool valid_module_name(const std::string& n) {
  if (n.empty() || n.size() > 200) return false;
  return std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isalnum(c) || std::strchr("_.-/+@:", c); });
}

}  // namespace corral::security
