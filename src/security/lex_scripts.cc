// The R, Ruby and Bash lexers.
#include "src/security/lexer.h"

namespace corral::security::lex {
namespace {

class RLexer : Lexer {
 public:
  using Lexer::Lexer;
  void run() {
    size_t i = 0;
    while (i < n_) {
      char c = s_[i];
      if (c == '#') {
        size_t e = eol(i, false);
        comment(i, e);
        i = e;
      } else if (c == '\'' || c == '"') {
        i = quoted(i + 1, c);
      } else if (c == '`') {  // a quoted name: code, but quotes and '#' inside mean nothing
        ++i;
        while (i < n_ && s_[i] != '`') i += s_[i] == '\\' ? 2 : 1;
        i = std::min(i + 1, n_);
      } else if (c == '%') {  // %op%
        size_t e = s_.find('%', i + 1);
        size_t nl = s_.find('\n', i + 1);
        i = (e != npos && (nl == npos || e < nl)) ? e + 1 : i + 1;
      } else if (is_ident(c) || c == '.') {
        size_t j = i;
        while (j < n_ && (is_ident(s_[j]) || s_[j] == '.')) ++j;
        if (j == i + 1 && (c == 'r' || c == 'R') && (ch(j) == '"' || ch(j) == '\'')) {
          size_t e = raw_string(j);
          if (e != npos) {
            i = e;
            continue;
          }
        }
        i = j;
      } else {
        ++i;
      }
    }
  }

 private:
  size_t quoted(size_t i, char q) {  // R strings may span lines
    while (i < n_ && s_[i] != q) {
      size_t e = s_[i] == '\\' ? i + 2 : i + 1;
      string(i, e);
      i = e;
    }
    return std::min(i + 1, n_);
  }
  // r"(...)", R'[...]', r"---{...}---"; npos when it is not one.
  size_t raw_string(size_t q) {
    size_t p = q + 1;
    while (p < n_ && s_[p] == '-') ++p;
    char open = ch(p), close;
    if (open == '(') close = ')';
    else if (open == '[') close = ']';
    else if (open == '{') close = '}';
    else return npos;
    std::string end(1, close);
    end.append(s_, q + 1, p - q - 1);
    end.push_back(s_[q]);
    size_t e = s_.find(end, p + 1);
    if (e == npos) {
      string(p + 1, n_);
      return n_;
    }
    string(p + 1, e);
    return e + end.size();
  }
};

class RubyLexer : Lexer {
 public:
  using Lexer::Lexer;
  void run() { code(0, false); }

 private:
  enum class Mode { kPlain, kInterp, kVisible };
  struct Heredoc {
    std::string id;
    bool indented;
    Mode mode;
  };

  static bool expr_keyword(const std::string& w) {
    for (const char* k : {"if", "unless", "while", "until", "and", "or", "not", "return", "when", "in", "then", "else",
                          "elsif", "do", "case", "yield", "begin", "rescue", "ensure", "break", "next"}) {
      if (w == k) return true;
    }
    return false;
  }
  // Whether an ambiguous operator character at i starts a literal (`/re/`, `%w()`, `?a`,
  // `<<EOS`): at the start of an expression, or as the first argument of a method call
  // written `name /x/` (space before, none after), the way Ruby itself decides.
  bool literal_here(size_t i) const {
    if (!prev_value_) return true;
    return prev_ident_ && i > 0 && is_hspace(s_[i - 1]) && i + 1 < n_ && !std::isspace(static_cast<unsigned char>(s_[i + 1]));
  }

  size_t code(size_t i, bool interp) {
    int depth = 0;
    bool line_start = i == 0;
    while (i < n_) {
      if (line_start && !interp) {
        line_start = false;
        if (at(i, "=begin") && (i + 6 == n_ || std::isspace(static_cast<unsigned char>(s_[i + 6])))) {
          size_t e = i;
          for (;;) {
            e = s_.find('\n', e);
            if (e == npos) {
              e = n_;
              break;
            }
            ++e;
            if (at(e, "=end") && (e + 4 == n_ || std::isspace(static_cast<unsigned char>(s_[e + 4])))) {
              e = eol(e, false);
              break;
            }
          }
          comment(i, e);
          i = e;
          continue;
        }
        if (at(i, "__END__") && (i + 7 == n_ || s_[i + 7] == '\n' || s_[i + 7] == '\r')) return n_;  // data: visible
      }
      unsigned char c = s_[i];
      if (c == '\n') {
        ++i;
        if (!pending_.empty()) i = heredoc_bodies(i);
        line_start = true;
        continue;
      }
      if (is_hspace(c)) {
        ++i;
        continue;
      }
      bool value = false, ident = false;
      if (c == '#') {
        size_t e = eol(i, false);
        comment(i, e);
        i = e;
        continue;
      } else if (c == '\\') {
        i += 2;
        continue;
      } else if (c == '\'') {
        i = delimited(i + 1, '\'', '\'', Mode::kPlain), value = true;
      } else if (c == '"') {
        i = delimited(i + 1, '"', '"', Mode::kInterp), value = true;
      } else if (c == '`') {
        i = delimited(i + 1, '`', '`', Mode::kVisible), value = true;
      } else if (c == '$' && i + 1 < n_ && std::strchr("!@&`'+~=/\\,;.<>_*$?:\"0123456789", s_[i + 1]) && s_[i + 1] != '\0') {
        i += 2, value = true;
      } else if (c == '?' && literal_here(i) && i + 1 < n_ && !std::isspace(static_cast<unsigned char>(s_[i + 1])) &&
                 (s_[i + 1] == '\\' || !is_ident(ch(i + 2)))) {
        i += s_[i + 1] == '\\' ? 3 : 2, value = true;  // ?a character literal
      } else if (c == '%' && literal_here(i) && percent_start(i)) {
        i = percent(i), value = true;
      } else if (c == '/' && literal_here(i)) {
        i = delimited(i + 1, '/', '/', Mode::kVisible);
        while (i < n_ && std::isalpha(static_cast<unsigned char>(s_[i]))) ++i;
        value = true;
      } else if (c == '<' && ch(i + 1) == '<' && heredoc_start(&i)) {
        value = true;
      } else if (is_ident(c) || c == '@') {
        size_t j = i;
        while (j < n_ && s_[j] == '@') ++j;
        while (j < n_ && is_ident(s_[j])) ++j;
        if ((ch(j) == '?' || ch(j) == '!') && ch(j + 1) != '=' && j > i && !std::isdigit(c)) ++j;
        std::string w = s_.substr(i, j - i);
        i = j;
        value = !expr_keyword(w);
        ident = !std::isdigit(c);
      } else {
        if (interp && c == '{') ++depth;
        if (interp && c == '}') {
          if (depth == 0) return i;
          --depth;
        }
        value = c == ')' || c == ']' || c == '}';
        ++i;
      }
      prev_value_ = value;
      prev_ident_ = ident;
    }
    return n_;
  }

  size_t delimited(size_t i, char open, char close, Mode mode) {
    int nest = 0;
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        if (mode != Mode::kVisible) string(i, i + 2);
        i += 2;
        continue;
      }
      if (mode != Mode::kPlain && c == '#' && ch(i + 1) == '{') {
        bool pv = prev_value_, pi = prev_ident_;
        prev_value_ = prev_ident_ = false;
        i = code(i + 2, true);
        prev_value_ = pv, prev_ident_ = pi;
        if (i < n_) ++i;
        continue;
      }
      if (open != close && c == open) {
        ++nest;
      } else if (c == close) {
        if (nest == 0) return i + 1;
        --nest;
      }
      if (mode != Mode::kVisible) string(i, i + 1);
      ++i;
    }
    return n_;
  }

  bool percent_start(size_t i) const {
    size_t d = i + 1;
    if (d < n_ && std::strchr("qQwWiIsrx", s_[d]) && s_[d] != '\0') ++d;
    if (d >= n_) return false;
    unsigned char c = s_[d];
    return std::ispunct(c) && c != '=' && !(d == i + 1 && c == '=');
  }
  size_t percent(size_t i) {
    char type = 'Q';
    size_t d = i + 1;
    if (std::isalpha(static_cast<unsigned char>(s_[d]))) type = s_[d++];
    char open = s_[d], close = open;
    if (open == '(') close = ')';
    else if (open == '[') close = ']';
    else if (open == '{') close = '}';
    else if (open == '<') close = '>';
    Mode mode = Mode::kInterp;
    if (std::strchr("qwis", type)) mode = Mode::kPlain;
    else if (type == 'x' || type == 'r') mode = Mode::kVisible;
    size_t e = delimited(d + 1, open, close, mode);
    if (type == 'r') {
      while (e < n_ && std::isalpha(static_cast<unsigned char>(s_[e]))) ++e;
    }
    return e;
  }

  // <<ID, <<~ID, <<-ID, quoted forms; *i is at the first '<'. The body starts on the next line.
  bool heredoc_start(size_t* pi) {
    size_t i = *pi, j = i + 2;
    bool indented = false;
    if (ch(j) == '~' || ch(j) == '-') indented = true, ++j;
    Mode mode = Mode::kInterp;
    std::string id;
    char q = ch(j);
    if (q == '\'' || q == '"' || q == '`') {
      size_t e = j + 1;
      while (e < n_ && s_[e] != q && s_[e] != '\n') ++e;
      if (ch(e) != q || e == j + 1) return false;
      id = s_.substr(j + 1, e - j - 1);
      mode = q == '\'' ? Mode::kPlain : q == '`' ? Mode::kVisible : Mode::kInterp;
      j = e + 1;
    } else if (is_ident(q) && !std::isdigit(static_cast<unsigned char>(q))) {
      if (!indented && !literal_here(i)) return false;  // `a << b` / `a <<b` after a value
      size_t e = j;
      while (e < n_ && is_ident(s_[e])) ++e;
      id = s_.substr(j, e - j);
      j = e;
    } else {
      return false;
    }
    pending_.push_back({id, indented, mode});
    *pi = j;
    return true;
  }

  // Bodies of the heredocs started on the line just ended; i is the next line's start.
  size_t heredoc_bodies(size_t i) {
    for (const Heredoc& h : pending_) {
      size_t body = i, ls = i;
      for (;;) {
        if (ls >= n_) {
          i = n_;
          break;
        }
        size_t le = eol(ls, false);
        std::string line = s_.substr(ls, le - ls);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (h.indented) line.erase(0, line.find_first_not_of(" \t"));
        if (line == h.id) {
          if (h.mode == Mode::kPlain) string(body, ls);
          i = std::min(le + 1, n_);
          break;
        }
        ls = le + 1;
      }
      if (i == n_ && h.mode == Mode::kPlain) string(body, n_);
    }
    pending_.clear();
    return i;
  }

  bool prev_value_ = false;
  bool prev_ident_ = false;
  std::vector<Heredoc> pending_;
};

// Bash: only comments are stripped; quoting is tracked to know where a comment can start.
class BashLexer : Lexer {
 public:
  using Lexer::Lexer;
  void run() { code(0, '\0'); }

 private:
  struct Heredoc {
    std::string id;
    bool strip_tabs;
  };

  bool word_start(size_t i) const { return i == 0 || std::strchr(" \t\n;&|()", s_[i - 1]) != nullptr; }

  size_t code(size_t i, char stop) {
    int depth = 0;
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        i += 2;
      } else if (c == '\n') {
        ++i;
        if (!pending_.empty()) i = heredoc_bodies(i);
      } else if (c == '\'') {
        size_t e = s_.find('\'', i + 1);
        i = e == npos ? n_ : e + 1;
      } else if (c == '$' && ch(i + 1) == '\'') {
        i += 2;
        while (i < n_ && s_[i] != '\'') i += s_[i] == '\\' ? 2 : 1;
        i = std::min(i + 1, n_);
      } else if (c == '"') {
        i = dquote(i + 1);
      } else if (c == '`') {
        if (stop == '`') return i;
        i = code(i + 1, '`');
        i = std::min(i + 1, n_);
      } else if (c == '$' && ch(i + 1) == '(') {
        i = code(i + 2, ')');
        i = std::min(i + 1, n_);
      } else if (c == '(') {
        ++depth, ++i;
      } else if (c == ')') {
        if (stop == ')' && depth == 0) return i;
        if (depth > 0) --depth;
        ++i;
      } else if (c == '#' && word_start(i)) {
        size_t e = eol(i, false);
        comment(i, e);
        i = e;
      } else if (c == '<' && ch(i + 1) == '<' && ch(i + 2) != '<') {
        i = heredoc_start(i + 2);
      } else {
        ++i;
      }
    }
    return n_;
  }

  size_t dquote(size_t i) {
    while (i < n_) {
      char c = s_[i];
      if (c == '\\') {
        i += 2;
      } else if (c == '"') {
        return i + 1;
      } else if (c == '`') {
        i = std::min(code(i + 1, '`') + 1, n_);
      } else if (c == '$' && ch(i + 1) == '(') {
        i = std::min(code(i + 2, ')') + 1, n_);
      } else {
        ++i;
      }
    }
    return n_;
  }

  size_t heredoc_start(size_t j) {
    bool strip = false;
    if (ch(j) == '-') strip = true, ++j;
    while (j < n_ && (s_[j] == ' ' || s_[j] == '\t')) ++j;
    std::string id;
    while (j < n_ && !std::strchr(" \t\n;&|()<>", s_[j])) {
      char c = s_[j];
      if (c == '\'' || c == '"') {
        size_t e = s_.find(c, j + 1);
        if (e == npos || s_.find('\n', j + 1) < e) break;
        id += s_.substr(j + 1, e - j - 1);
        j = e + 1;
      } else if (c == '\\') {
        if (j + 1 < n_) id += s_[j + 1];
        j += 2;
      } else {
        id += c;
        ++j;
      }
    }
    if (!id.empty()) pending_.push_back({id, strip});
    return j;
  }

  // Heredoc bodies stay visible (they are often scripts fed to an interpreter).
  size_t heredoc_bodies(size_t i) {
    for (const Heredoc& h : pending_) {
      for (size_t ls = i;;) {
        if (ls >= n_) {
          i = n_;
          break;
        }
        size_t le = eol(ls, false);
        std::string line = s_.substr(ls, le - ls);
        if (h.strip_tabs) line.erase(0, line.find_first_not_of('\t'));
        if (line == h.id) {
          i = std::min(le + 1, n_);
          break;
        }
        ls = le + 1;
      }
    }
    pending_.clear();
    return i;
  }

  std::vector<Heredoc> pending_;
};

}  // namespace

void r(CodeText& t) { RLexer(t).run(); }
void ruby(CodeText& t) { RubyLexer(t).run(); }
void bash(CodeText& t) { BashLexer(t).run(); }

}  // namespace corral::security::lex
