// The C-family lexer (javascript, java, cpp, go, told apart by CFamily flags) and Java's
// unicode-escape translation.
#include "src/security/lexer.h"

namespace corral::security::lex {
namespace {

class CLexer : Lexer {
 public:
  CLexer(CodeText& t, CFamily f) : Lexer(t), f_(f) {}
  void run() { code(0, false); }

 private:
  struct Tok {
    enum Kind { kNone, kIdent, kKeyword, kLiteral, kPunct } kind = kNone;
    char punct = 0;         // for kPunct; 'I' for ++/--, 'A' for =>
    std::string word;       // for kKeyword
    bool ctl_paren = false;   // a ')' closing if(...)/while(...)/for(...)/with(...)
    bool block_brace = false; // a '}' closing a block
  };

  static bool in(const std::string& w, std::initializer_list<const char*> words) {
    for (const char* x : words) {
      if (w == x) return true;
    }
    return false;
  }
  static bool regex_allowed(const Tok& t) {
    switch (t.kind) {
      case Tok::kNone: return true;
      case Tok::kIdent:
      case Tok::kLiteral: return false;
      case Tok::kKeyword: return in(t.word, {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
                                             "throw", "case", "do", "else", "yield", "await"});
      case Tok::kPunct:
        if (t.punct == ')') return t.ctl_paren;
        if (t.punct == '}') return t.block_brace;
        return t.punct != ']' && t.punct != 'I';
    }
    return true;
  }
  static bool brace_is_block(const Tok& t) {
    if (t.kind == Tok::kNone) return true;
    if (t.kind == Tok::kKeyword) return in(t.word, {"else", "do", "try", "finally"});
    if (t.kind == Tok::kPunct) return t.punct == ';' || t.punct == '{' || t.punct == '}' || t.punct == ')' || t.punct == 'A';
    return false;
  }
  static bool is_js_keyword(const std::string& w) {
    return in(w, {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
                  "else", "yield", "await", "if", "while", "for", "with", "try", "finally", "switch", "catch"});
  }

  // Length of a JavaScript whitespace or line terminator encoded in UTF-8 at i (0: none).
  size_t js_space(size_t i) const {
    unsigned char c = s_[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return 1;
    if (at(i, "\xC2\xA0")) return 2;
    if (at(i, "\xEF\xBB\xBF") || at(i, "\xE3\x80\x80") || at(i, "\xE1\x9A\x80") || at(i, "\xE2\x81\x9F")) return 3;
    if (c == 0xE2 && ch(i + 1) == '\x80') {
      unsigned char d = ch(i + 2);
      if ((d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF) return 3;
    }
    return 0;
  }
  size_t line_comment_end(size_t i) const {
    while (i < n_) {
      char c = s_[i];
      if (c == '\n' || (c == '\r' && f_.cr_ends_line_comment)) {
        if (f_.splice && i > 0 && s_[i - 1] == '\\') {
          i += (c == '\r' && ch(i + 1) == '\n') ? 2 : 1;
          continue;
        }
        return i;
      }
      if (f_.javascript && (at(i, "\xE2\x80\xA8") || at(i, "\xE2\x80\xA9"))) return i;
      ++i;
    }
    return n_;
  }

  size_t code(size_t i, bool in_template) {
    std::vector<bool> parens, braces;
    Tok last;
    auto punct = [&](char p) {
      last = Tok{};
      last.kind = Tok::kPunct;
      last.punct = p;
    };
    while (i < n_) {
      unsigned char c = s_[i];
      if (f_.javascript) {
        if (size_t w = js_space(i)) {
          i += w;
          continue;
        }
      } else if (std::isspace(c)) {
        ++i;
        continue;
      }
      if (c == '/' && ch(i + 1) == '/') {
        size_t e = line_comment_end(i);
        comment(i, e);
        i = e;
        continue;
      }
      if (c == '/' && ch(i + 1) == '*') {
        size_t e = s_.find("*/", i + 2);
        e = e == npos ? n_ : e + 2;
        comment(i, e);
        i = e;
        continue;
      }
      if (f_.javascript && i == 0 && c == '#' && ch(1) == '!') {  // hashbang
        size_t e = line_comment_end(i);
        comment(i, e);
        i = e;
        continue;
      }
      if (c == '"' && f_.text_blocks && at(i, "\"\"\"")) {
        i = delimited(i + 3, "\"\"\"", true);
        last = Tok{Tok::kLiteral};
        continue;
      }
      if (c == '"' || (c == '\'' && (f_.javascript || f_.char_literals))) {
        i = delimited(i + 1, c == '"' ? "\"" : "'", false);
        last = Tok{Tok::kLiteral};
        continue;
      }
      if (c == '`' && f_.backtick_raw) {
        size_t e = s_.find('`', i + 1);
        e = e == npos ? n_ : e;
        string(i + 1, e);
        i = std::min(e + 1, n_);
        last = Tok{Tok::kLiteral};
        continue;
      }
      if (c == '`' && f_.javascript) {
        i = template_literal(i + 1);
        last = Tok{Tok::kLiteral};
        continue;
      }
      if (c == '/' && f_.javascript) {
        if (regex_allowed(last)) {
          i = regex_literal(i + 1);
          last = Tok{Tok::kLiteral};
        } else {
          ++i;
          punct('/');
        }
        continue;
      }
      if (std::isdigit(c) || (c == '.' && std::isdigit(static_cast<unsigned char>(ch(i + 1))))) {
        i = number(i);
        last = Tok{Tok::kLiteral};
        continue;
      }
      if (is_ident(c) || c == '$' || (c == '\\' && f_.javascript)) {
        size_t j = i;
        while (j < n_ && (is_ident(s_[j]) || s_[j] == '$' || (s_[j] == '\\' && f_.javascript))) {
          if (f_.javascript && static_cast<unsigned char>(s_[j]) >= 0x80 && js_space(j)) break;
          if (s_[j] == '\\') {
            if (!noted_escape_) {
              noted_escape_ = true;
              evasion(j, false, "unicode escape in an identifier (\\u0065val is eval) hides the name from the scanner");
            }
            ++j;
            if (ch(j) == 'u' && ch(j + 1) == '{') {
              size_t e = s_.find('}', j);
              j = e == npos ? n_ : e + 1;
              continue;
            }
          }
          ++j;
        }
        std::string w = s_.substr(i, j - i);
        if (f_.raw_prefix_strings && ch(j) == '"' && in(w, {"R", "u8R", "uR", "UR", "LR"})) {
          i = raw_string(j);
          last = Tok{Tok::kLiteral};
          continue;
        }
        i = j;
        last = Tok{};
        if (f_.javascript && is_js_keyword(w)) {
          last.kind = Tok::kKeyword;
          last.word = w;
        } else {
          last.kind = Tok::kIdent;
        }
        continue;
      }
      if (c == '(') {
        parens.push_back(last.kind == Tok::kKeyword && in(last.word, {"if", "while", "for", "with"}));
        punct('(');
      } else if (c == ')') {
        bool ctl = !parens.empty() && parens.back();
        if (!parens.empty()) parens.pop_back();
        punct(')');
        last.ctl_paren = ctl;
      } else if (c == '{') {
        braces.push_back(brace_is_block(last));
        punct('{');
      } else if (c == '}') {
        if (braces.empty() && in_template) return i;
        bool block = braces.empty() || braces.back();
        if (!braces.empty()) braces.pop_back();
        punct('}');
        last.block_brace = block;
      } else if ((c == '+' || c == '-') && ch(i + 1) == static_cast<char>(c)) {
        punct('I');
        ++i;
      } else if (c == '=' && ch(i + 1) == '>') {
        punct('A');
        ++i;
      } else {
        punct(static_cast<char>(c));
      }
      ++i;
    }
    return n_;
  }

  // pp-number: digits, letters, '.', exponent signs, and (C++) digit separators.
  size_t number(size_t i) const {
    while (i < n_) {
      char c = s_[i];
      if (is_ascii_alnum(c) || c == '_' || c == '.') {
        ++i;
      } else if ((c == '+' || c == '-') && std::strchr("eEpP", s_[i - 1])) {
        ++i;
      } else if (c == '\'' && f_.digit_separators && is_ascii_alnum(ch(i + 1))) {
        i += 2;
      } else {
        break;
      }
    }
    return i;
  }

  // Literal text from i up to the closing delimiter (returned index is after it). Backslash
  // escapes anything (including a newline); an unescaped newline ends a single-line literal.
  size_t delimited(size_t i, const char* close, bool multiline) {
    const size_t len = strlen(close);
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        size_t e = i + 2;
        if (ch(i + 1) == '\r' && ch(i + 2) == '\n') e = i + 3;
        string(i, e);
        i = e;
        continue;
      }
      if (at(i, close)) return i + len;
      if (!multiline && (c == '\n' || c == '\r')) return i;  // unterminated: lex on as code
      string(i, i + 1);
      ++i;
    }
    return n_;
  }

  size_t template_literal(size_t i) {
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        string(i, i + 2);
        i += 2;
      } else if (c == '`') {
        return i + 1;
      } else if (c == '$' && ch(i + 1) == '{') {
        i = code(i + 2, true);  // ${ and } stay code
        if (i < n_) ++i;
      } else {
        string(i, i + 1);
        ++i;
      }
    }
    return n_;
  }

  // A regex literal stays visible; this only finds where it ends.
  size_t regex_literal(size_t i) const {
    bool cls = false;
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '\n' || c == '\r') return i;  // not a regex after all
      if (c == '[') cls = true;
      else if (c == ']') cls = false;
      else if (c == '/' && !cls) {
        ++i;
        while (i < n_ && is_ascii_alnum(s_[i])) ++i;
        return i;
      }
      ++i;
    }
    return n_;
  }

  // R"delim( ... )delim" with the quote at q.
  size_t raw_string(size_t q) {
    size_t p = q + 1;
    while (p < n_ && p - q <= 17 && s_[p] != '(' && !std::strchr(" )\\\t\v\f\r\n", s_[p])) ++p;
    if (ch(p) != '(' || p - q > 17) return delimited(q + 1, "\"", false);
    std::string close = ")" + s_.substr(q + 1, p - q - 1) + "\"";
    size_t e = s_.find(close, p + 1);
    if (e == npos) {
      string(p + 1, n_);
      return n_;
    }
    string(p + 1, e);
    return e + close.size();
  }

  CFamily f_;
  bool noted_escape_ = false;
};

}  // namespace

void c_family(CodeText& t, const CFamily& family) { CLexer(t, family).run(); }

// JLS 3.3: \uXXXX escapes are translated before anything else, anywhere in the file.
void decode_java_unicode(CodeText& t, const std::string& in) {
  if (in.find("\\u") == npos) {
    t.source = in;
    return;
  }
  auto hex = [&](size_t i) -> int {
    int v = 0;
    for (size_t k = i; k < i + 4; ++k) {
      if (k >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[k]))) return -1;
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(in[k])));
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
    }
    return v;
  };
  // Returns {code unit, length of the escape} or {-1, 0}.
  auto escape_at = [&](size_t i) -> std::pair<int, size_t> {
    if (i + 1 >= in.size() || in[i] != '\\' || in[i + 1] != 'u') return {-1, 0};
    size_t k = i + 1;
    while (k < in.size() && in[k] == 'u') ++k;
    int v = hex(k);
    return v < 0 ? std::pair<int, size_t>{-1, 0} : std::pair<int, size_t>{v, k + 4 - i};
  };
  std::string out;
  std::vector<uint32_t> origin;
  auto emit = [&](uint32_t cp, size_t from) {
    char buf[4];
    size_t len;
    if (cp < 0x80) buf[0] = static_cast<char>(cp), len = 1;
    else if (cp < 0x800) buf[0] = static_cast<char>(0xC0 | (cp >> 6)), buf[1] = static_cast<char>(0x80 | (cp & 0x3F)), len = 2;
    else if (cp < 0x10000) {
      buf[0] = static_cast<char>(0xE0 | (cp >> 12)), buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buf[2] = static_cast<char>(0x80 | (cp & 0x3F)), len = 3;
    } else {
      buf[0] = static_cast<char>(0xF0 | (cp >> 18)), buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), buf[3] = static_cast<char>(0x80 | (cp & 0x3F)), len = 4;
    }
    out.append(buf, len);
    origin.insert(origin.end(), len, static_cast<uint32_t>(from));
  };
  for (size_t i = 0; i < in.size();) {
    if (in[i] == '\\' && i + 1 < in.size() && in[i + 1] == '\\') {  // an escaped backslash is not eligible
      out += "\\\\";
      origin.push_back(static_cast<uint32_t>(i));
      origin.push_back(static_cast<uint32_t>(i + 1));
      i += 2;
      continue;
    }
    auto [v, len] = escape_at(i);
    if (v < 0) {
      out += in[i];
      origin.push_back(static_cast<uint32_t>(i));
      ++i;
      continue;
    }
    uint32_t cp = static_cast<uint32_t>(v);
    size_t used = len;
    if (v >= 0xD800 && v <= 0xDBFF) {
      auto [lo, len2] = escape_at(i + len);
      if (lo >= 0xDC00 && lo <= 0xDFFF) cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00), used += len2;
    }
    emit(cp, i);
    i += used;
  }
  t.source = std::move(out);
  t.origin = std::move(origin);
}

}  // namespace corral::security::lex
