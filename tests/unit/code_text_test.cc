// The scanner's foundations: per-language lexing (comments and strings stripped, positions
// kept, the lexer traps that would hide code), line/column mapping, and the bounded regex
// windowing. Policies, presets and bypasses are in security_policy_test.cc.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/security/code_text.h"
#include "src/security/pattern_scan.h"

namespace corral::security {
namespace {

// ---------------------------------------------------------------------------------------
// Lexers

TEST(CodeText, PythonStripsCommentsAndStringsKeepingPositions) {
  const std::string code = "x = 'a#b'  # import os\ny = \"\"\"doc\nimport os\"\"\"\nz = 1\n";
  CodeText ct = strip_code("python", code);
  ASSERT_EQ(ct.code.size(), code.size());
  ASSERT_EQ(ct.text.size(), code.size());
  for (size_t i = 0; i < code.size(); ++i) EXPECT_EQ(code[i] == '\n', ct.code[i] == '\n') << i;
  EXPECT_EQ(ct.code.find("import"), std::string::npos) << ct.code;
  EXPECT_NE(ct.text.find("doc\nimport os"), std::string::npos) << ct.text;  // strings stay in `text`
  EXPECT_EQ(ct.text.find("# import"), std::string::npos) << ct.text;       // comments do not
  EXPECT_EQ(ct.code.find("z = 1"), code.find("z = 1"));
  EXPECT_EQ(ct.cls[code.find("a#b")], CharClass::kString);
  EXPECT_EQ(ct.cls[code.find("# import")], CharClass::kComment);
  EXPECT_EQ(ct.cls[code.find("x =")], CharClass::kCode);
}

TEST(CodeText, PythonFStringFieldsStayCode) {
  const std::string code = "s = f\"{os.system('id')} and {x!r:>{w}} {{literal}}\"  # c\nt = rb'\\'' + F'''{a}\n'''\n";
  CodeText ct = strip_code("python", code);
  EXPECT_EQ(ct.code.find("os.system("), code.find("os.system(")) << ct.code;
  EXPECT_EQ(ct.code.find("'id'"), std::string::npos) << ct.code;  // a string inside the field
  EXPECT_EQ(ct.code.find("and"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("literal"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("{w}"), std::string::npos) << ct.code;  // nested field in the format spec
  EXPECT_EQ(ct.code.find("# c"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("{a}"), std::string::npos) << ct.code;
}

TEST(CodeText, PythonLoneCarriageReturnEndsAComment) {
  // CPython ends a comment at a lone CR: what follows runs.
  CodeText ct = strip_code("python", "x = 1 # c\rimport os\n");
  EXPECT_NE(ct.code.find("import os"), std::string::npos) << ct.code;
}

TEST(CodeText, PythonLineContinuationBackslashIsBlanked) {
  CodeText ct = strip_code("python", "import \\\n    os\n");
  EXPECT_EQ(ct.code.find('\\'), std::string::npos) << ct.code;
}

TEST(CodeText, PythonNonUtf8SourceEncodingIsAnEvasion) {
  CodeText bad = strip_code("python", "# -*- coding: utf_7 -*-\nx = 1 #+AAo-print(1)\n");
  ASSERT_EQ(bad.evasions.size(), 1u);
  EXPECT_TRUE(bad.evasions[0].critical);
  EXPECT_NE(bad.evasions[0].message.find("utf_7"), std::string::npos);
  EXPECT_TRUE(strip_code("python", "# -*- coding: utf-8 -*-\nx = 1\n").evasions.empty());
  EXPECT_TRUE(strip_code("python", "#!/usr/bin/env python3\n# vim: set fileencoding=latin-1 :\n").evasions.empty());
}

TEST(CodeText, JavascriptTemplatesRegexLiteralsAndLineTerminators) {
  CodeText t = strip_code("javascript", "const t = `a ${require('fs')} b`;\n");
  EXPECT_NE(t.code.find("require("), std::string::npos) << t.code;
  EXPECT_EQ(t.code.find(" a "), std::string::npos) << t.code;
  // A regex literal containing a quote must not open a string that hides the rest.
  CodeText r = strip_code("javascript", "const r = /\"/; const cp = load(); //\"\n");
  EXPECT_NE(r.code.find("const cp = load()"), std::string::npos) << r.code;
  // ...and a division is not a regex: the string after it is still a string.
  CodeText d = strip_code("javascript", "const h = a / 2; const s = 'x/y'; f();\n");
  EXPECT_EQ(d.code.find("x/y"), std::string::npos) << d.code;
  EXPECT_NE(d.code.find("f();"), std::string::npos) << d.code;
  // U+2028 ends a // comment in JavaScript.
  CodeText ls = strip_code("javascript", "// c\xE2\x80\xA8require('x')\n");
  EXPECT_NE(ls.code.find("require("), std::string::npos) << ls.code;
}

TEST(CodeText, JavaUnicodeEscapesAreDecodedBeforeLexing) {
  // javac turns \u000a into a newline before it sees comments: the call below is code.
  const std::string code = "class A { // \\u000a Runtime.getRuntime().exec(\"id\");\n}\n";
  CodeText ct = strip_code("java", code);
  size_t at = ct.code.find("Runtime.getRuntime().exec(");
  ASSERT_NE(at, std::string::npos) << ct.code;
  EXPECT_EQ(ct.input_offset(at), code.find("Runtime"));
  EXPECT_EQ(LineIndex(code).at(ct.input_offset(at)).line, 1);
  // An escaped backslash is not a unicode escape.
  CodeText lit = strip_code("java", "String s = \"\\\\u0041\";\n");
  EXPECT_EQ(lit.source, "String s = \"\\\\u0041\";\n");
}

TEST(CodeText, CppRawStringsAndDigitSeparators) {
  const std::string code = "int n = 1'000'000; auto s = R\"x(\")x\"; system(\"id\");\n";
  CodeText ct = strip_code("cpp", code);
  EXPECT_EQ(ct.code.find("system("), code.find("system(")) << ct.code;
  EXPECT_EQ(ct.cls[code.find(")x\"") - 1], CharClass::kString);
  CodeText splice = strip_code("cpp", "// comment \\\nsystem(\"id\");\nint x;\n");
  EXPECT_EQ(splice.code.find("system"), std::string::npos) << splice.code;  // continued comment
  EXPECT_NE(splice.code.find("int x;"), std::string::npos);
}

TEST(CodeText, GoLoneCarriageReturnDoesNotEndAComment) {
  // In Go a lone CR stays inside the comment, so the backquote is commented out; treating CR
  // as a line end would open a raw string that hides exec.Command.
  CodeText ct = strip_code("go", "// x\r`\nexec.Command(\"id\")\n// `\n");
  EXPECT_NE(ct.code.find("exec.Command("), std::string::npos) << ct.code;
  CodeText raw = strip_code("go", "s := `multi\nline \"os/exec\"`\nfmt.Println(s)\n");
  EXPECT_EQ(raw.code.find("os/exec"), std::string::npos) << raw.code;
  EXPECT_NE(raw.code.find("fmt.Println"), std::string::npos);
}

TEST(CodeText, RStringsRawStringsAndBacktickNames) {
  CodeText ct = strip_code("r", "x <- \"# not a comment\" # real\n`my var` <- r\"(it's)\"; system('id')\n");
  EXPECT_NE(ct.code.find("system("), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("real"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("not a comment"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("it's"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("`my var`"), std::string::npos) << ct.code;
}

TEST(CodeText, RubyInterpolationCharLiteralsHeredocsAndBlockComments) {
  const std::string code =
      "c = ?'; system(\"id\")\n"
      "s = \"a #{File.delete('x')} b\"\n"
      "puts $'\n"
      "t = <<~'EOS'\n"
      "  it's\n"
      "EOS\n"
      "exec('y')\n"
      "=begin\n"
      "system('z')\n"
      "=end\n"
      "q = %q(a 'b' c)\n";
  CodeText ct = strip_code("ruby", code);
  EXPECT_NE(ct.code.find("system(\""), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("File.delete("), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("exec("), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("it's"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("system('z')"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("'b'"), std::string::npos) << ct.code;
}

TEST(CodeText, BashStripsOnlyCommentsThatStartAWord) {
  const std::string code = "x=#a; echo a#b; curl x # c 'd\necho '#' \"$(echo \"#\")\" && wget y\n";
  CodeText ct = strip_code("bash", code);
  EXPECT_FALSE(ct.strings_stripped);
  EXPECT_NE(ct.code.find("x=#a"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("a#b"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("curl x"), std::string::npos) << ct.code;
  EXPECT_EQ(ct.code.find("# c"), std::string::npos) << ct.code;
  EXPECT_NE(ct.code.find("'#'"), std::string::npos) << ct.code;  // strings are code in a shell
  EXPECT_NE(ct.code.find("wget y"), std::string::npos) << ct.code;
}

TEST(LineIndex, CountsCharactersNotBytes) {
  const std::string text = "é = 1\nab";
  LineIndex li(text);
  EXPECT_EQ(li.at(text.find('=')).line, 1);
  EXPECT_EQ(li.at(text.find('=')).column, 3);
  EXPECT_EQ(li.at(text.find('b')).line, 2);
  EXPECT_EQ(li.at(text.find('b')).column, 2);
}

// ---------------------------------------------------------------------------------------
// Regex windowing

TEST(PatternScan, RequiredLiterals) {
  EXPECT_EQ(required_literals(R"(\bos\s*\.\s*system\s*\()"), std::vector<std::string>{"system"});
  EXPECT_EQ(required_literals(R"(\b(?:eval|exec)\s*\()"), (std::vector<std::string>{"eval", "exec"}));
  EXPECT_EQ(required_literals(R"((abc)?xy)"), std::vector<std::string>{"xy"});
  EXPECT_EQ(required_literals(R"(ab|cd.*)"), (std::vector<std::string>{"ab", "cd"}));
  EXPECT_EQ(required_literals(R"(foo(?=barbaz))"), std::vector<std::string>{"foo"});
  EXPECT_TRUE(required_literals(R"([a-z]+\d)").empty());
  EXPECT_TRUE(required_literals(R"(a|[bc])").empty());  // one branch has no literal
}

TEST(PatternScan, HugeLinesNeitherCrashNorHideMatches) {
  auto re = ScanRegex::compile(R"(\bos\s*\.\s*system\s*\()", "p");
  ASSERT_TRUE(re.ok());
  const std::string view = std::string(300000, 'a') + " os.system(" + std::string(100000, ')');
  std::vector<size_t> at;
  EXPECT_EQ(re->for_each_match(view, 0, [&](const ScanRegex::Match& m) { return at.push_back(m.begin), true; }),
            ScanRegex::Outcome::kDone);
  EXPECT_EQ(at, std::vector<size_t>{300001});
  // A pattern that runs along a long line: searched in bounded chunks, so no stack overflow;
  // a match longer than kMaxMatch is the documented limit.
  auto long_re = ScanRegex::compile(R"(open\([^)]*'w')", "p");
  ASSERT_TRUE(long_re.ok());
  size_t n = 0;
  const std::string huge = "open(" + std::string(200000, 'a') + "'w')";
  long_re->for_each_match(huge, 0, [&](const ScanRegex::Match&) { return ++n, true; });
  EXPECT_EQ(n, 0u);
  const std::string fits = std::string(5000, ' ') + "open(" + std::string(kMaxMatch - 20, 'a') + "'w')";
  long_re->for_each_match(fits, 0, [&](const ScanRegex::Match&) { return ++n, true; });
  EXPECT_EQ(n, 1u);
  // No literal to anchor on: the whole view is searched, chunk by chunk. One unchunked
  // std::regex attempt along this 200,000-character run overflows the stack and kills the
  // process; chunked, the attempt stops at the chunk end (the match is longer than kMaxMatch).
  auto no_literal = ScanRegex::compile(R"([x][a-z]+\d)", "p");
  ASSERT_TRUE(no_literal.ok());
  ASSERT_TRUE(no_literal->literals().empty());
  size_t found = 0;
  EXPECT_EQ(no_literal->for_each_match("x" + std::string(200000, 'a') + "1", 0,
                                       [&](const ScanRegex::Match&) { return ++found, true; }),
            ScanRegex::Outcome::kDone);
  EXPECT_EQ(found, 0u);
}

TEST(PatternScan, MatchesAcrossChunkBoundariesAreFoundOnce) {
  auto re = ScanRegex::compile(R"([0-9]{3}x)", "p");  // no literal: the whole view is chunked
  ASSERT_TRUE(re.ok());
  std::string view(3 * kChunk, '.');
  std::vector<size_t> planted = {0, kChunk - kMaxMatch - 2, kChunk - 2, 2 * kChunk - 1, 3 * kChunk - 4};
  for (size_t p : planted) view.replace(p, 4, "123x");
  std::vector<size_t> at;
  re->for_each_match(view, 0, [&](const ScanRegex::Match& m) { return at.push_back(m.begin), true; });
  std::sort(at.begin(), at.end());
  EXPECT_EQ(at, planted);
}

TEST(PatternScan, RejectsPatternsThatCannotWork) {
  EXPECT_FALSE(ScanRegex::compile("", "p").ok());
  EXPECT_FALSE(ScanRegex::compile("(", "p").ok());
  EXPECT_FALSE(ScanRegex::compile("x*", "p").ok());  // matches everywhere
  Status s = ScanRegex::compile("a{5000}", "patterns[3].pattern").status();
  EXPECT_EQ(s.field(), "patterns[3].pattern");
  EXPECT_NE(s.message().find("1000"), std::string::npos);
}

}  // namespace
}  // namespace corral::security
