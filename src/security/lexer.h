// Internal to src/security: what the per-language lexers share, and their entry points.
// Each lexer follows code_text.h's contract: stripped bytes become spaces, newlines stay,
// and where the lexer must guess it guesses towards "code".
#pragma once

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "src/security/code_text.h"

namespace corral::security::lex {

constexpr size_t npos = std::string::npos;

inline bool is_ascii_alnum(unsigned char c) { return std::isalnum(c) != 0; }
inline bool is_ident(unsigned char c) { return is_ascii_alnum(c) || c == '_' || c >= 0x80; }
inline bool is_hspace(unsigned char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Shared by the lexers: the views and the marking of stripped ranges.
class Lexer {
 public:
  explicit Lexer(CodeText& t) : t_(t), s_(t.source), n_(t.source.size()) {}

 protected:
  void mark(size_t from, size_t to, CharClass c) {
    to = std::min(to, n_);
    for (size_t i = from; i < to; ++i) {
      t_.cls[i] = c;
      if (t_.code[i] != '\n') t_.code[i] = ' ';
      if (c == CharClass::kComment && t_.text[i] != '\n') t_.text[i] = ' ';
    }
  }
  void comment(size_t from, size_t to) { mark(from, to, CharClass::kComment); }
  void string(size_t from, size_t to) { mark(from, to, CharClass::kString); }
  bool at(size_t i, const char* lit) const { return s_.compare(i, strlen(lit), lit) == 0; }
  char ch(size_t i) const { return i < n_ ? s_[i] : '\0'; }
  // End of the line starting at or after i: the index of the terminator (or n_).
  size_t eol(size_t i, bool cr_ends) const {
    while (i < n_ && s_[i] != '\n' && !(cr_ends && s_[i] == '\r')) ++i;
    return i;
  }
  void evasion(size_t at, bool critical, std::string message) {
    t_.evasions.push_back({at, critical, std::move(message)});
  }

  CodeText& t_;
  const std::string& s_;
  const size_t n_;
};

struct CFamily {
  bool cr_ends_line_comment;  // a lone CR ends a // comment (javac, gcc, node — not go)
  bool splice;                // backslash-newline continues a // comment (C/C++)
  bool char_literals;         // '...' is a one-character literal (java, cpp, go)
  bool digit_separators;      // 1'000 (cpp)
  bool raw_prefix_strings;    // R"d(...)d" (cpp)
  bool backtick_raw;          // `...` raw string (go)
  bool text_blocks;           // """...""" (java)
  bool javascript;            // templates, regex literals, '...' strings, identifier escapes
};

void python(CodeText& t);
void c_family(CodeText& t, const CFamily& family);  // javascript, java, cpp, go
// Java: \uXXXX escapes are translated before anything else; sets t.source and t.origin.
void decode_java_unicode(CodeText& t, const std::string& input);
void r(CodeText& t);
void ruby(CodeText& t);
void bash(CodeText& t);

}  // namespace corral::security::lex
