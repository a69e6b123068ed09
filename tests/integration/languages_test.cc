// Every language, for real, in native sandboxes: hello world, stdin, a runtime error, a
// timeout, compile errors where there is a compiler, and library installation from local
// sources (there is no network inside a sandbox, and none here either).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "src/lang/runner.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

struct Sample {
  const char* lang;
  const char* hello;       // prints "hello <stdin line>"
  const char* runtime_error;
  const char* spin;        // never ends
  const char* bad_syntax;  // nullptr for interpreted languages
};

const Sample kSamples[] = {
    {"python", "print('hello', input())", "raise ValueError('boom')", "while True: pass", nullptr},
    {"javascript",
     "const l = require('fs').readFileSync(0, 'utf8').trim(); console.log('hello ' + l);",
     "throw new Error('boom');", "while (true) {}", nullptr},
    {"java",
     "import java.util.Scanner;\npublic class Greeter { public static void main(String[] a) {\n"
     "  System.out.println(\"hello \" + new Scanner(System.in).nextLine()); } }",
     "public class Boom { public static void main(String[] a) { throw new RuntimeException(\"boom\"); } }",
     "public class Spin { public static void main(String[] a) { while (true) {} } }",
     "public class Bad { void f() { int x = \"not an int\"; } }"},
    {"cpp",
     "#include <iostream>\n#include <string>\nint main() { std::string s; std::getline(std::cin, s);"
     " std::cout << \"hello \" << s << std::endl; }",
     "#include <stdexcept>\nint main() { throw std::runtime_error(\"boom\"); }",
     "int main() { volatile int x = 0; while (true) { ++x; } }", "int main( { return 0; }"},
    {"go",
     "package main\nimport (\"bufio\"; \"fmt\"; \"os\")\nfunc main() { s := bufio.NewScanner(os.Stdin); s.Scan();"
     " fmt.Println(\"hello \" + s.Text()) }",
     "package main\nfunc main() { panic(\"boom\") }", "package main\nfunc main() { for {} }",
     "package main\nfunc main() { undefinedThing() }"},
    {"r", "l <- readLines(file('stdin'), n = 1); cat('hello', l, '\\n')", "stop('boom')", "repeat {}", nullptr},
    {"ruby", "puts \"hello #{STDIN.gets.strip}\"", "raise 'boom'", "loop {}", nullptr},
    {"bash", "read l; echo \"hello $l\"", "echo boom >&2; exit 3", "while :; do :; done", nullptr},
};

class Languages : public SandboxTest, public ::testing::WithParamInterface<Sample> {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (IsSkipped()) return;
    const lang::LanguageHandler* h = lang::find_language(GetParam().lang);
    ASSERT_NE(h, nullptr);
    if (access(h->binary(), X_OK) != 0) GTEST_SKIP() << h->binary() << " is not installed (tools/setup-deps installs it)";
  }

  ExecResult run_code(const std::string& code, const std::string& stdin_data = "", uint64_t wall_ms = 60'000) {
    lang::RunRequest req;
    req.language = GetParam().lang;
    req.code = code;
    req.stdin_data = stdin_data;
    req.policy.limits.wall_ms = wall_ms;
    return run_lang(req);
  }
};

TEST_P(Languages, HelloWithStdin) {
  ExecResult r = run_code(GetParam().hello, "corral\n");
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << ": " << r.message << "\n" << r.stderr_data;
  EXPECT_EQ(r.stage, "run");
  EXPECT_NE(r.stdout_data.find("hello corral"), std::string::npos) << r.stdout_data;
}

TEST_P(Languages, RuntimeErrorKeepsStderr) {
  ExecResult r = run_code(GetParam().runtime_error);
  EXPECT_EQ(r.stage, "run");
  EXPECT_TRUE(r.status() == ExecStatus::kNonzeroExit || r.status() == ExecStatus::kSignaled)
      << exec_status_name(r.status());
  EXPECT_NE(r.stderr_data.find("boom"), std::string::npos) << r.stderr_data;
}

TEST_P(Languages, TimeoutIsReported) {
  ExecResult r = run_code(GetParam().spin, "", 1500);
  EXPECT_EQ(r.status(), ExecStatus::kTimeout) << r.stage << ": " << r.message << r.stderr_data;
  EXPECT_EQ(r.stage, "run");
}

using CompiledLanguages = Languages;

TEST_P(CompiledLanguages, CompileErrorIsItsOwnResult) {
  ExecResult r = run_code(GetParam().bad_syntax);
  EXPECT_EQ(r.stage, "compile");
  EXPECT_EQ(r.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(r.message, "compilation failed");
  EXPECT_FALSE(r.stderr_data.empty() && r.stdout_data.empty()) << "no compiler message";
}

auto sample_name = [](const auto& info) { return std::string(info.param.lang); };
INSTANTIATE_TEST_SUITE_P(All, Languages, ::testing::ValuesIn(kSamples), sample_name);
INSTANTIATE_TEST_SUITE_P(All, CompiledLanguages,
                         ::testing::Values(kSamples[2], kSamples[3], kSamples[4]),  // java, cpp, go
                         sample_name);

// Local library sources, made on the host by the test.
class Libraries : public SandboxTestWithDir {
 protected:
  // 0755: the sandbox user reads the sources through a bind mount.
  Libraries() : SandboxTestWithDir("/tmp/corral-libs-XXXXXX", 0755) {}
  void write(const std::string& rel, const std::string& content) {
    fs::create_directories(fs::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel) << content;
  }
  ExecResult run(const char* lang, const std::string& code, const std::vector<std::string>& libs) {
    lang::RunRequest req;
    req.language = lang;
    req.code = code;
    req.libraries = libs;
    return run_lang(req);
  }
  bool host_has(const char* tool) { return access(tool, X_OK) == 0; }
  int host(const std::string& cmd) { return system(("cd " + dir_ + " && " + cmd + " >/dev/null 2>&1").c_str()); }
};

TEST_F(Libraries, PythonFromLocalSourceTree) {
  write("greet/pyproject.toml", "[build-system]\nrequires=['setuptools']\nbuild-backend='setuptools.build_meta'\n"
                                "[project]\nname='greet'\nversion='1.0'\n");
  write("greet/greet.py", "def hi():\n    return 'hi from greet'\n");
  // A pure-python wheel built on the host (offline: no build isolation).
  if (host("/usr/bin/python3 -m pip wheel --no-deps --no-build-isolation --no-index -w wheels ./greet") != 0) {
    GTEST_SKIP() << "cannot build a wheel on this host (python3-setuptools/pip missing)";
  }
  std::string wheel;
  for (const auto& e : fs::directory_iterator(dir_ + "/wheels")) wheel = e.path();
  ExecResult r = run("python", "import greet; print(greet.hi())", {wheel});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hi from greet\n");
}

TEST_F(Libraries, JavascriptFromLocalTarball) {
  write("pkg/package/package.json", R"({"name": "greet", "version": "1.0.0", "main": "index.js"})");
  write("pkg/package/index.js", "module.exports = () => 'hi from npm';\n");
  ASSERT_EQ(host("tar -czf greet-1.0.0.tgz -C pkg package"), 0);
  ExecResult r = run("javascript", "console.log(require('greet')())", {dir_ + "/greet-1.0.0.tgz"});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hi from npm\n");
}

TEST_F(Libraries, RubyFromLocalGem) {
  if (!host_has("/usr/bin/gem")) GTEST_SKIP() << "gem is not installed";
  write("gem/lib/greet.rb", "module Greet; def self.hi; 'hi from gem'; end; end\n");
  write("gem/greet.gemspec", "Gem::Specification.new do |s| s.name = 'greet'; s.version = '1.0'; s.summary = 's';"
                             " s.authors = ['a']; s.files = ['lib/greet.rb']; end\n");
  ASSERT_EQ(host("cd gem && gem build greet.gemspec"), 0);
  ExecResult r = run("ruby", "require 'greet'; puts Greet.hi", {dir_ + "/gem/greet-1.0.gem"});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data << r.stdout_data;
  EXPECT_EQ(r.stdout_data, "hi from gem\n");
}

TEST_F(Libraries, RFromLocalPackageDirectory) {
  if (!host_has("/usr/bin/R")) GTEST_SKIP() << "R is not installed";
  write("greet/DESCRIPTION", "Package: greet\nVersion: 1.0\nTitle: t\nDescription: d.\nLicense: MIT\n"
                             "Authors@R: person('a', 'b', role = c('aut', 'cre'), email = 'a@b.c')\n");
  write("greet/NAMESPACE", "export(hi)\n");
  write("greet/R/hi.R", "hi <- function() 'hi from R'\n");
  ExecResult r = run("r", "library(greet); cat(hi(), '\\n')", {dir_ + "/greet"});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hi from R \n");
}

TEST_F(Libraries, GoFromLocalModule) {
  if (!host_has("/usr/bin/go")) GTEST_SKIP() << "go is not installed";
  write("greet/go.mod", "module example.com/greet\n\ngo 1.19\n");
  write("greet/greet.go", "package greet\n\nfunc Hi() string { return \"hi from go\" }\n");
  ExecResult r = run("go",
                     "package main\nimport (\"fmt\"; \"example.com/greet\")\nfunc main() { fmt.Println(greet.Hi()) }",
                     {dir_ + "/greet"});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data << r.stdout_data;
  EXPECT_EQ(r.stdout_data, "hi from go\n");
}

TEST_F(Libraries, ClearErrorsWhenInstallationIsImpossible) {
  lang::RunRequest req;
  req.language = "python";
  req.code = "print(1)";
  req.libraries = {"requests"};
  auto by_name = lang::run_code(executor_, req);
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.status().field(), "libraries[0]");
  EXPECT_NE(by_name.status().message().find("no network"), std::string::npos);
  req.libraries = {"/nonexistent/pkg.whl"};
  auto missing = lang::run_code(executor_, req);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().to_string().find("/nonexistent/pkg.whl"), std::string::npos);
  req.language = "java";
  req.code = "public class A { public static void main(String[] a) {} }";
  req.libraries = {dir_};
  auto java = lang::run_code(executor_, req);
  ASSERT_FALSE(java.ok());
  EXPECT_EQ(java.status().code(), ErrorCode::kUnsupported);
  // A broken package fails at the install stage, with pip's own message.
  write("broken/setup.py", "raise SystemExit('this package is broken')\n");
  req.language = "python";
  req.libraries = {dir_ + "/broken"};
  auto broken = lang::run_code(executor_, req);
  ASSERT_TRUE(broken.ok()) << broken.status().to_string();
  EXPECT_EQ(broken->stage, "install");
  EXPECT_NE(broken->status(), ExecStatus::kOk);
}

TEST(LanguageHandlers, JavaFileIsNamedAfterThePublicClass) {
  const lang::LanguageHandler* java = lang::find_language("java");
  ASSERT_NE(java, nullptr);
  EXPECT_EQ(java->source_file("public class Greeter { }"), "Greeter.java");
  EXPECT_EQ(java->source_file("import x;\npublic final class Solution{}"), "Solution.java");
  EXPECT_EQ(java->source_file("class Hidden {}"), "Main.java");
  EXPECT_EQ(java->source_file("// public class Fake\npublic class Real {}"), "Real.java");
  EXPECT_EQ(java->source_file("/* public class A */ class B { String s = \"public class C\"; }\npublic class D {}"),
            "D.java");
}

TEST(LanguageHandlers, AliasesResolve) {
  EXPECT_STREQ(lang::find_language("JS")->name(), "javascript");
  EXPECT_STREQ(lang::find_language("c++")->name(), "cpp");
  EXPECT_STREQ(lang::find_language("golang")->name(), "go");
  EXPECT_STREQ(lang::find_language("R")->name(), "r");
  EXPECT_EQ(lang::find_language("cobol"), nullptr);
}

}  // namespace
}  // namespace corral::testing
