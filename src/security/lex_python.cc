// The Python lexer: comments, string literals with prefixes, f-/t-string replacement fields,
// explicit line joining, and the PEP 263 source-encoding check.
#include "src/security/lexer.h"

namespace corral::security::lex {
namespace {

class PythonLexer : Lexer {
 public:
  using Lexer::Lexer;
  void run() {
    check_coding();
    code(0, nullptr);
  }

 private:
  enum : int { kRaw = 1, kFormat = 2 };
  struct Field {
    bool triple;
  };

  // PEP 263: a declaration in the first two lines. An encoding that is not ASCII-compatible
  // (UTF-7, unicode_escape, ...) makes the interpreter read something other than what this
  // lexer reads: `#+AAo-print(1)` is a comment here and a call under UTF-7.
  void check_coding() {
    size_t line_start = 0;
    for (int line = 0; line < 2 && line_start < n_; ++line) {
      size_t e = eol(line_start, true);
      std::string l = s_.substr(line_start, e - line_start);
      size_t p = l.find_first_not_of(" \t\f");
      if (p != npos && l[p] == '#') {
        for (size_t k = l.find("coding", p); k != npos; k = l.find("coding", k + 1)) {
          size_t q = k + 6;
          if (q >= l.size() || (l[q] != ':' && l[q] != '=')) continue;
          ++q;
          while (q < l.size() && (l[q] == ' ' || l[q] == '\t')) ++q;
          size_t r = q;
          while (r < l.size() && (is_ascii_alnum(l[r]) || l[r] == '-' || l[r] == '_' || l[r] == '.')) ++r;
          std::string name = lower(l.substr(q, r - q));
          std::replace(name.begin(), name.end(), '_', '-');
          if (!name.empty() && !ascii_compatible(name)) {
            evasion(line_start + k, true,
                    "source encoding '" + l.substr(q, r - q) +
                        "' is declared: Python decodes the file differently from how it is scanned "
                        "(UTF-7 hides code inside comments)");
          }
          return;
        }
      }
      if (e < n_ && s_[e] == '\r' && e + 1 < n_ && s_[e + 1] == '\n') ++e;
      line_start = e + 1;
    }
  }
  static bool ascii_compatible(const std::string& n) {
    static const char* const kNames[] = {"utf-8", "utf8", "u8", "utf", "utf-8-sig", "ascii", "us-ascii", "646",
                                         "latin-1", "latin1", "l1", "iso-8859-1", "iso8859-1", "iso-latin-1",
                                         "cp819", "8859"};
    for (const char* k : kNames) {
      if (n == k) return true;
    }
    for (const char* p : {"utf-8-", "latin-1-", "iso-8859-1-", "iso-8859-", "iso8859-", "latin-", "cp125", "windows-125"}) {
      if (n.rfind(p, 0) == 0) return true;
    }
    return false;
  }

  // String prefix flags for the identifier s_[i, j) directly before a quote, or -1.
  int prefix_flags(size_t i, size_t j) const {
    if (j - i > 2) return -1;
    std::string p = lower(s_.substr(i, j - i));
    static const char* const kPrefixes[] = {"r", "u", "b", "f", "t", "rb", "br", "fr", "rf", "tr", "rt"};
    if (std::find_if(std::begin(kPrefixes), std::end(kPrefixes), [&](const char* k) { return p == k; }) ==
        std::end(kPrefixes)) {
      return -1;
    }
    int flags = 0;
    if (p.find('r') != npos) flags |= kRaw;
    if (p.find('f') != npos || p.find('t') != npos) flags |= kFormat;
    return flags;
  }

  // Code from i. Inside an f-string replacement field (`f` set) it stops before a top-level
  // '}', ':' or '!' conversion, or a newline of a single-quoted f-string.
  size_t code(size_t i, const Field* f) {
    int depth = 0;
    while (i < n_) {
      unsigned char c = s_[i];
      if (f) {
        if (depth == 0 && (c == '}' || c == ':')) return i;
        if (depth == 0 && c == '!' && ch(i + 1) != '=') return i;
        if (!f->triple && (c == '\n' || c == '\r')) return i;
      }
      if (c == '#') {
        if (f && !f->triple) {  // not a comment there (a syntax error): stay conservative
          ++i;
          continue;
        }
        size_t e = eol(i, true);
        comment(i, e);
        i = e;
      } else if (c == '\\' && (ch(i + 1) == '\n' || ch(i + 1) == '\r')) {
        comment(i, i + 1);  // explicit line joining: blank the backslash
        ++i;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth, ++i;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth > 0) --depth;
        ++i;
      } else if (c == '\'' || c == '"') {
        i = quoted(i, 0);
      } else if (is_ident(c)) {
        size_t j = i;
        bool non_ascii = false;
        while (j < n_ && is_ident(s_[j])) non_ascii |= static_cast<unsigned char>(s_[j++]) >= 0x80;
        if (j < n_ && (s_[j] == '\'' || s_[j] == '"')) {
          int flags = prefix_flags(i, j);
          if (flags >= 0) {
            i = quoted(j, flags);
            continue;
          }
        }
        if (non_ascii && !noted_non_ascii_) {
          noted_non_ascii_ = true;
          evasion(i, false,
                  "non-ASCII identifier '" + s_.substr(i, j - i) +
                      "': Python NFKC-normalises identifiers (a fullwidth 'ｅｖａｌ' is eval), which the "
                      "scanner does not");
        }
        i = j;
      } else {
        ++i;
      }
    }
    return n_;
  }

  // A string literal whose opening quote is at q; returns the index after it. Delimiters
  // and f-string replacement fields stay code; literal text is marked string.
  size_t quoted(size_t q, int flags) {
    const char qc = s_[q];
    const bool triple = ch(q + 1) == qc && ch(q + 2) == qc;
    const bool raw = flags & kRaw, fmt = flags & kFormat;
    size_t i = q + (triple ? 3 : 1);
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        if (fmt && (ch(i + 1) == '{' || ch(i + 1) == '}')) {
          string(i, i + 1);
          ++i;
          continue;
        }
        size_t e = i + 2;
        if (fmt && !raw && ch(i + 1) == 'N' && ch(i + 2) == '{') {  // \N{NAME} is not a field
          e = i + 3;
          while (e < n_ && (is_ascii_alnum(s_[e]) || s_[e] == ' ' || s_[e] == '-')) ++e;
          if (ch(e) == '}') ++e;
        } else if (ch(i + 1) == '\r' && ch(i + 2) == '\n') {
          e = i + 3;
        }
        string(i, e);
        i = e;
        continue;
      }
      if (c == qc) {
        if (!triple) return i + 1;
        if (ch(i + 1) == qc && ch(i + 2) == qc) return i + 3;
      } else if (!triple && (c == '\n' || c == '\r')) {
        return i;  // unterminated: the program cannot run; lex on as code
      } else if (fmt && c == '{') {
        if (ch(i + 1) == '{') {
          string(i, i + 2);
          i += 2;
        } else {
          i = field(i + 1, triple, qc);
        }
        continue;
      } else if (fmt && c == '}' && ch(i + 1) == '}') {
        string(i, i + 2);
        i += 2;
        continue;
      }
      string(i, i + 1);
      ++i;
    }
    return n_;
  }

  // A replacement field after its '{': expression, conversion, format spec, '}'.
  size_t field(size_t i, bool triple, char qc) {
    Field f{triple};
    size_t j = code(i, &f);
    while (j < n_) {
      char c = s_[j];
      if (c == '!') {
        j = std::min(j + 2, n_);
      } else if (c == ':') {
        j = spec(j + 1, triple, qc);
      } else if (c == '}') {
        return j + 1;
      } else {
        return j;  // a newline or quote: the string decides
      }
    }
    return n_;
  }

  size_t spec(size_t i, bool triple, char qc) {
    while (i < n_) {
      char c = s_[i];
      if (c == '{') {
        i = field(i + 1, triple, qc);
        continue;
      }
      if (c == '}' || c == qc || (!triple && (c == '\n' || c == '\r'))) return i;
      string(i, i + 1);
      ++i;
    }
    return n_;
  }

  bool noted_non_ascii_ = false;
};

}  // namespace

void python(CodeText& t) { PythonLexer(t).run(); }

}  // namespace corral::security::lex
