#include "src/security/code_text.h"

#include <algorithm>

#include "src/security/lexer.h"

namespace corral::security {

CodeText strip_code(const std::string& language, const std::string& input) {
  CodeText t;
  t.language = language;
  if (language == "java") lex::decode_java_unicode(t, input);
  else t.source = input;
  t.text = t.source;
  t.code = t.source;
  t.cls.assign(t.source.size(), CharClass::kCode);
  // Where a lone CR is a line break for the language, make it one for the regexes too.
  if (language == "python" || language == "javascript" || language == "java" || language == "cpp") {
    for (size_t i = 0; i < t.source.size(); ++i) {
      if (t.source[i] == '\r' && (i + 1 == t.source.size() || t.source[i + 1] != '\n')) t.text[i] = t.code[i] = '\n';
    }
  }
  lex::CFamily c{};
  if (language == "python") {
    lex::python(t);
  } else if (language == "javascript") {
    c.cr_ends_line_comment = true, c.javascript = true;
    lex::c_family(t, c);
  } else if (language == "java") {
    c.cr_ends_line_comment = true, c.char_literals = true, c.text_blocks = true;
    lex::c_family(t, c);
  } else if (language == "cpp") {
    c.cr_ends_line_comment = true, c.splice = true, c.char_literals = true, c.digit_separators = true;
    c.raw_prefix_strings = true;
    lex::c_family(t, c);
  } else if (language == "go") {
    c.char_literals = true, c.backtick_raw = true;
    lex::c_family(t, c);
  } else if (language == "r") {
    lex::r(t);
  } else if (language == "ruby") {
    lex::ruby(t);
  } else if (language == "bash") {
    t.strings_stripped = false;
    lex::bash(t);
  } else {
    t.strings_stripped = false;
  }
  return t;
}

LineIndex::LineIndex(const std::string& text) : text_(text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

LineIndex::Position LineIndex::at(size_t offset) const {
  offset = std::min(offset, text_.size());
  size_t line = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin();
  int column = 1;
  for (size_t i = starts_[line - 1]; i < offset; ++i) {
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;
  }
  return {static_cast<int>(line), column};
}

}  // namespace corral::security
