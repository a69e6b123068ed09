// Source code split into what a language's own lexer would call code, string-literal contents
// and comments, so the security scanner can match patterns against the code alone. Stripped
// characters are replaced by spaces and newlines are kept, so a byte offset in a view is a
// byte offset in the source: line and column numbers survive stripping.
//
// The lexers follow each language closely enough for real programs, and where they must
// guess they guess towards "code": text wrongly left visible only costs a false positive,
// text wrongly stripped would hide code from the scanner. Details that matter for that:
//   python      f-/t-string replacement fields stay code (nested strings and format specs
//               followed); a lone CR ends a comment (it does for CPython); `\`-newline
//               continuations are blanked so `import \` + newline + `os` reads as one.
//   javascript  template literals' ${...} stay code; regex literals are recognised from the
//               previous token (and stay visible); CR, U+2028 and U+2029 end comments.
//   java        \uXXXX escapes are decoded first, as javac does (`// \u000a code` is code),
//               so `source` can differ from the input; `input_offset()` maps back.
//   cpp         raw strings R"d(...)d", digit separators 1'000, `\`-newline in comments.
//   go          raw `strings`; only LF ends a comment (a lone CR does not, in Go).
//   r           strings may span lines; raw strings r"(...)"; `backtick names` stay code.
//   ruby        #{...} interpolation stays code; `backticks`, %x() and regexes stay visible;
//               heredoc bodies stay visible; ?x character literals and $' globals handled.
//   bash        only comments are stripped: in a shell, strings are code (`bash -c '...'`,
//               "$(...)"), so no string is ever blanked.
// Unknown languages are not stripped at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace corral::security {

enum class CharClass : uint8_t { kCode = 0, kString = 1, kComment = 2 };

// Something in the source that defeats static scanning (found while lexing).
struct Evasion {
  size_t offset;        // in `source`
  bool critical;        // hides arbitrary code from the scanner (vs. hides names)
  std::string message;
};

struct CodeText {
  std::string language;  // canonical name, or whatever was given when unknown
  std::string source;    // what the language's lexer sees (the input, except for Java)
  std::string text;      // source with comments blanked
  std::string code;      // text with string-literal contents blanked too
  std::vector<CharClass> cls;  // per byte of `source`
  std::vector<uint32_t> origin;  // empty: identity; else origin[i] = input offset of source[i]
  bool strings_stripped = true;  // false for bash and unknown languages
  std::vector<Evasion> evasions;

  size_t input_offset(size_t i) const { return origin.empty() ? i : (i < origin.size() ? origin[i] : origin.back() + 1); }
  bool is_code(size_t i) const { return i < cls.size() && cls[i] == CharClass::kCode; }
};

// `language` is a canonical corral language name (python javascript java cpp go r ruby bash).
CodeText strip_code(const std::string& language, const std::string& input);

// 1-based line and column of byte offsets in a text; columns count UTF-8 characters.
class LineIndex {
 public:
  explicit LineIndex(const std::string& text);
  struct Position {
    int line;
    int column;
  };
  Position at(size_t offset) const;

 private:
  const std::string& text_;
  std::vector<size_t> starts_;
};

}  // namespace corral::security
