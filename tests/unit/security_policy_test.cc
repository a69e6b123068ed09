// Security policies: presets per language, comments and strings vs module rules, module
// rules and their aliases, positions, severity thresholds, scopes, padding, JSON parsing,
// library rules, reports — and the known ways around a pattern scanner, each asserted as
// what the scanner really does (caught, or a documented miss). The lexers and the regex
// windowing underneath are tested in code_text_test.cc.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/security/pattern_scan.h"
#include "src/security/security_policy.h"

namespace corral::security {
namespace {

SecurityPolicy preset(const std::string& name) {
  auto p = SecurityPolicy::preset(name);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? *p : SecurityPolicy{};
}

SecurityPolicy custom(const std::string& json) {
  auto p = SecurityPolicy::from_json_text(json);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? *p : SecurityPolicy{};
}

// The policy restricting one module in one language, at high severity.
SecurityPolicy only_module(const std::string& language, const std::string& module) {
  return custom(R"({"restricted_modules": {")" + language + R"(": [{"name": ")" + module +
                R"(", "severity": "high"}]}})");
}

bool has_module(const ScanReport& r, const std::string& name) {
  for (const auto& v : r.violations) {
    if (v.kind == "module" && v.rule == name) return true;
  }
  return false;
}

// A finding whose module name or description contains `what`.
bool has_finding(const ScanReport& r, const std::string& what) {
  for (const auto& v : r.violations) {
    if (v.rule == what || v.description.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string dump(const ScanReport& r) { return r.to_text(); }

TEST(PatternScan, EveryPresetPatternHasALiteralToAnchorOn) {
  // Literal-free patterns search every byte of a file, quadratically within each chunk;
  // presets must never need that.
  for (const auto& name : SecurityPolicy::preset_names()) {
    for (const auto& p : preset(name).patterns) {
      EXPECT_FALSE(required_literals(p.pattern).empty()) << name << ": " << p.pattern;
    }
  }
}

TEST(SecurityScan, SlowScansFailClosed) {
  SecurityPolicy p = custom(R"({"scan_budget_ms": 50, "patterns": [
      {"pattern": "[a-z]+\\d", "description": "slow", "severity": "low"}]})");
  ScanReport r = scan(p, "python", "x = " + std::string(4'000'000, 'a') + "\n");
  EXPECT_FALSE(r.allowed);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations[0].kind, "policy");
  EXPECT_NE(r.violations[0].description.find("scan_budget_ms"), std::string::npos) << dump(r);
}

// Padding a statement — with whitespace, comments, blanked strings or repeated names — must
// not push a module or a call out of the scanner's reach.
TEST(SecurityScan, PaddingDoesNotHideModulesOrCalls) {
  SecurityPolicy os = only_module("python", "os");
  std::string names;
  for (int i = 0; i < 400; ++i) names += "json, ";
  EXPECT_TRUE(has_module(scan(os, "python", "import " + names + "os\n"), "os"));
  EXPECT_TRUE(has_module(scan(os, "python", "__import__(" + std::string(5000, ' ') + "'os')\n"), "os"));
  std::string continued = "import ";
  for (int i = 0; i < 1500; ++i) continued += "\\\n";
  EXPECT_TRUE(has_module(scan(os, "python", continued + "    os\n"), "os"));
  EXPECT_TRUE(has_module(scan(os, "python", "from os" + std::string(3000, ' ') + "import system\n"), "os"));

  SecurityPolicy go = only_module("go", "os/exec");
  EXPECT_TRUE(has_module(
      scan(go, "go", "import (\n\t\"fmt\"\n\t/* " + std::string(5000, 'x') + " */\n\tx \"os/exec\"\n)\n"), "os/exec"));
  std::string block = "import (\n";
  for (int i = 0; i < 40000; ++i) block += "\t\"fmt\"\n";  // was catastrophic backtracking
  ScanReport big = scan(go, "go", block + "\t\"os/exec\"\n)\n");
  EXPECT_TRUE(has_module(big, "os/exec")) << dump(big);
  EXPECT_EQ(big.violations.size(), 1u);

  SecurityPolicy cp = only_module("javascript", "child_process");
  std::string specifiers;
  for (int i = 0; i < 1000; ++i) specifiers += "exec as e" + std::to_string(i) + ", ";
  EXPECT_TRUE(has_module(scan(cp, "javascript", "import { " + specifiers + "spawn } from 'child_process';\n"),
                         "child_process"));

  // A long comment between the parts of a call.
  ScanReport call = scan(preset("development"), "python", "(os\n#" + std::string(5000, '-') + "\n.system)('id')\n");
  EXPECT_FALSE(call.allowed) << dump(call);
}

TEST(SecurityScan, PositionsSurviveSqueezedWhitespace) {
  const std::string code = "x = 1" + std::string(3000, ' ') + "; eval(y)\n\n\n\n\n\n    eval(z)\n";
  ScanReport r = scan(preset("strict"), "python", code);
  ASSERT_EQ(r.violations.size(), 2u) << dump(r);
  EXPECT_EQ(r.violations[0].line, 1);
  EXPECT_EQ(r.violations[0].column, 5 + 3000 + 3);
  EXPECT_EQ(r.violations[1].line, 7);
  EXPECT_EQ(r.violations[1].column, 5);
}

// ---------------------------------------------------------------------------------------
// Presets, per language

struct PresetCase {
  const char* preset;
  const char* language;
  const char* code;
  bool allowed;
  const char* finding;  // a module name or a description part that must be reported
};

class Presets : public ::testing::TestWithParam<PresetCase> {};

TEST_P(Presets, AllowOrRefuse) {
  const PresetCase& c = GetParam();
  ScanReport r = scan(preset(c.preset), c.language, c.code);
  EXPECT_EQ(r.allowed, c.allowed) << c.preset << " / " << c.language << ":\n" << c.code << "\n" << dump(r);
  if (*c.finding) {
    EXPECT_TRUE(has_finding(r, c.finding)) << c.finding << "\n" << dump(r);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, Presets,
    ::testing::Values(
        // python
        PresetCase{"strict", "python", "import subprocess\nsubprocess.run(['ls'])\n", false, "subprocess"},
        PresetCase{"strict", "python", "import os\nos.system('ls')\n", false, "os"},
        PresetCase{"strict", "python", "x = eval('1+1')\n", false, "eval"},
        PresetCase{"strict", "python", "exec('print(1)')\n", false, "exec"},
        PresetCase{"strict", "python", "import socket\ns = socket.socket()\n", false, "socket"},
        PresetCase{"strict", "python", "import re, json\nprint(re.compile('a+').findall('aa'), json.dumps(1))\n",
                   true, ""},
        PresetCase{"data_science", "python",
                   "import pandas as pd\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
                   "df = pd.DataFrame({'a': np.arange(3)})\ndf.plot()\nplt.savefig('out.png')\n",
                   true, ""},
        PresetCase{"data_science", "python", "import subprocess\nsubprocess.run(['ls'])\n", false, "subprocess"},
        PresetCase{"data_science", "python", "import requests\nprint(requests.get('https://example.com'))\n", true,
                   "requests"},
        PresetCase{"data_science", "python", "with open('out.csv', 'w') as f:\n    f.write('a')\n", true,
                   "File write"},
        PresetCase{"web_scraping", "python", "import requests\nfrom bs4 import BeautifulSoup\n", true, ""},
        PresetCase{"web_scraping", "python", "import socket\n", false, "socket"},
        PresetCase{"development", "python",
                   "import os, requests, socket\nprint(os.listdir('.'))\nx = eval('1')\nopen('f', 'w')\n", true, ""},
        PresetCase{"development", "python", "import os\nos.system('ls')\n", false, "os.system"},
        PresetCase{"development", "python", "import ctypes\n", false, "ctypes"},
        PresetCase{"minimal", "python", "import os\nos.system('ls')\n", true, ""},
        PresetCase{"minimal", "python", "import os\nos.system('rm -rf /tmp/x')\n", false, "Destructive"},
        PresetCase{"educational", "python", "x = eval('1+1')\nimport socket\n", true, "eval"},
        PresetCase{"educational", "python", "import shutil\nshutil.rmtree('/tmp/x')\n", false, "deletion"},
        PresetCase{"production", "python", "import os\n", false, "os"},
        PresetCase{"production", "python", "print(open('data.txt').read())\n", true, ""},
        PresetCase{"production", "python", "open('data.txt', 'w').write('x')\n", false, "File write"},
        PresetCase{"production", "python", "print(open('/etc/shadow').read())\n", false, "sensitive host path"},
        // javascript
        PresetCase{"strict", "javascript", "const cp = require('child_process');\ncp.execSync('ls');\n", false,
                   "child_process"},
        PresetCase{"strict", "javascript", "console.log([1, 2, 3].map(x => x * 2));\n", true, ""},
        PresetCase{"development", "javascript", "const fs = require('fs');\nconsole.log(fs.readdirSync('.'));\n",
                   true, ""},
        PresetCase{"development", "javascript", "require('child_process').exec(cmd);\n", false, "child_process"},
        PresetCase{"data_science", "javascript",
                   "const d = [1, 2, 3];\nconst mean = d.reduce((a, b) => a + b) / d.length;\nconsole.log(mean);\n",
                   true, ""},
        PresetCase{"web_scraping", "javascript",
                   "const res = await fetch('https://example.com');\nconst https = require('https');\n", true, ""},
        PresetCase{"web_scraping", "javascript", "const net = require('net');\nnet.connect(80, 'x');\n", false, "net"},
        PresetCase{"production", "javascript", "eval('1+1');\n", false, "eval"},
        // java
        PresetCase{"strict", "java",
                   "public class Main { public static void main(String[] a) throws Exception {\n"
                   "  Runtime.getRuntime().exec(\"id\"); } }\n",
                   false, "Program execution"},
        PresetCase{"development", "java",
                   "import java.util.*;\npublic class Main { public static void main(String[] a) {\n"
                   "  System.out.println(new ArrayList<Integer>(List.of(1, 2))); } }\n",
                   true, ""},
        PresetCase{"production", "java", "import java.net.Socket;\nclass A {}\n", false, "java.net"},
        PresetCase{"data_science", "java", "import java.lang.reflect.Method;\nclass A {}\n", false,
                   "java.lang.reflect"},
        // cpp
        PresetCase{"strict", "cpp", "#include <cstdlib>\nint main() { return system(\"id\"); }\n", false,
                   "Program execution"},
        PresetCase{"development", "cpp", "#include <iostream>\nint main() { std::cout << 42 << std::endl; }\n", true,
                   ""},
        PresetCase{"production", "cpp", "#include <sys/socket.h>\nint main() {}\n", false, "sys/socket.h"},
        PresetCase{"development", "cpp", "int main() { asm(\"nop\"); }\n", false, "assembly"},
        // go
        PresetCase{"strict", "go", "package main\nimport \"os/exec\"\nfunc main() { exec.Command(\"id\").Run() }\n",
                   false, "os/exec"},
        PresetCase{"development", "go",
                   "package main\nimport (\n\t\"fmt\"\n\t\"os\"\n)\nfunc main() { fmt.Println(os.Args) }\n", true, ""},
        PresetCase{"data_science", "go",
                   "package main\nimport \"net/http\"\nfunc main() { http.Get(\"https://example.com\") }\n", true,
                   "net/http"},
        PresetCase{"development", "go", "package main\nimport \"unsafe\"\n", false, "unsafe"},
        // r
        PresetCase{"strict", "r", "system('id')\n", false, "Shell command"},
        PresetCase{"data_science", "r", "library(ggplot2)\ndf <- data.frame(x = 1:3)\nprint(summary(df))\n", true, ""},
        PresetCase{"data_science", "r", "library(processx)\n", false, "processx"},
        PresetCase{"web_scraping", "r", "library(httr)\nr <- GET('https://example.com')\n", true, "httr"},
        // ruby
        PresetCase{"strict", "ruby", "out = `id`\n", false, "backticks"},
        PresetCase{"development", "ruby", "puts [1, 2, 3].sum\n", true, ""},
        PresetCase{"data_science", "ruby", "require 'open3'\n", false, "open3"},
        PresetCase{"web_scraping", "ruby", "require 'net/http'\nputs Net::HTTP.get(URI('https://example.com'))\n",
                   true, "net/http"},
        // bash
        PresetCase{"strict", "bash", "curl -s https://example.com\n", false, "curl"},
        PresetCase{"web_scraping", "bash", "curl -s https://example.com\n", true, "curl"},
        PresetCase{"development", "bash", "ls -la\necho done\n", true, ""},
        PresetCase{"development", "bash", "rm -rf /\n", false, "Recursive deletion"},
        PresetCase{"production", "bash", "exec 3<>/dev/tcp/1.2.3.4/80\n", false, "/dev/tcp"},
        PresetCase{"educational", "bash", "sudo ls\n", false, "sudo"}));

TEST(Presets, AllNamedPresetsLoadAndUnknownOnesAreNotFound) {
  EXPECT_EQ(SecurityPolicy::preset_names(),
            (std::vector<std::string>{"development", "production", "educational", "data_science", "web_scraping",
                                      "minimal", "strict"}));
  for (const auto& name : SecurityPolicy::preset_names()) {
    auto p = SecurityPolicy::preset(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().to_string();
    EXPECT_EQ(p->name, name);
    EXPECT_FALSE(p->patterns.empty()) << name;
  }
  auto bad = SecurityPolicy::preset("paranoid");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(bad.status().message().find("web_scraping"), std::string::npos);
  EXPECT_EQ(preset("strict").severity_threshold, Severity::kLow);
  EXPECT_EQ(preset("development").severity_threshold, Severity::kHigh);
  EXPECT_EQ(preset("data_science").severity_threshold, Severity::kMedium);
}

// ---------------------------------------------------------------------------------------
// Comments and strings do not trigger module rules

struct QuietCase {
  const char* language;
  const char* module;
  const char* mentions;  // the module only in comments and strings
  const char* real;      // a real import of it
};

class CommentsAndStrings : public ::testing::TestWithParam<QuietCase> {};

TEST_P(CommentsAndStrings, DoNotTriggerModuleRules) {
  const QuietCase& c = GetParam();
  SecurityPolicy p = only_module(c.language, c.module);
  ScanReport quiet = scan(p, c.language, c.mentions);
  EXPECT_TRUE(quiet.allowed) << dump(quiet);
  EXPECT_TRUE(quiet.violations.empty()) << dump(quiet);
  ScanReport loud = scan(p, c.language, std::string(c.mentions) + c.real);
  EXPECT_FALSE(loud.allowed) << dump(loud);
  EXPECT_TRUE(has_module(loud, c.module)) << dump(loud);
}

INSTANTIATE_TEST_SUITE_P(
    All, CommentsAndStrings,
    ::testing::Values(
        QuietCase{"python", "os",
                  "# import os\nx = 'import os'\n\"\"\"\nimport os\n\"\"\"\ny = f\"from os import system {x}\"\n",
                  "import os\n"},
        QuietCase{"javascript", "child_process",
                  "// require('child_process')\n/* import cp from 'child_process' */\n"
                  "const s = \"require('child_process')\";\nconst t = `import('child_process') ${s}`;\n",
                  "const cp = require('child_process');\n"},
        QuietCase{"java", "java.net",
                  "// import java.net.Socket;\n/* java.net.Socket s; */\nclass A { String s = \"import java.net.Socket;\";\n"
                  "  String t = \"\"\"\n    java.net.Socket\n    \"\"\"; }\n",
                  "import java.net.Socket;\n"},
        QuietCase{"cpp", "sys/socket.h",
                  "// #include <sys/socket.h>\n/* #include <sys/socket.h> */\nconst char* s = \"#include <sys/socket.h>\";\n",
                  "#include <sys/socket.h>\n"},
        QuietCase{"go", "os/exec",
                  "package main\n// import \"os/exec\"\nvar s = \"import \\\"os/exec\\\"\"\nvar r = `import \"os/exec\"`\n",
                  "import \"os/exec\"\n"},
        QuietCase{"r", "processx", "# library(processx)\ns <- \"library(processx)\"\nt <- 'processx::run()'\n",
                  "library(processx)\n"},
        QuietCase{"ruby", "open3", "# require 'open3'\n=begin\nrequire 'open3'\n=end\ns = 'require \"open3\"'\n",
                  "require 'open3'\n"},
        QuietCase{"bash", "curl", "# curl https://example.com\necho hello # and curl\n", "curl -s https://example.com\n"}));

TEST(CommentsAndStrings, InBashStringsAreCodeAndAreScanned) {
  // Documented: a shell runs strings (bash -c '...', "$(...)"), so they are not stripped.
  ScanReport r = scan(only_module("bash", "curl"), "bash", "bash -c 'curl -s https://example.com'\n");
  EXPECT_TRUE(has_module(r, "curl")) << dump(r);
}

// ---------------------------------------------------------------------------------------
// Positions, thresholds, scopes

TEST(SecurityScan, ReportsLineColumnAndExcerpt) {
  const std::string code = "import json\n\n# eval(comment)\nx = 1\nif x:\n    y = eval(z)\n";
  ScanReport r = scan(preset("strict"), "python", code);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r);
  EXPECT_EQ(r.violations[0].line, 6);
  EXPECT_EQ(r.violations[0].column, 9);
  EXPECT_EQ(r.violations[0].excerpt, "y = eval(z)");
  // Columns count characters, not bytes.
  ScanReport u = scan(preset("strict"), "python", "s = 'é'; eval(x)\n");
  ASSERT_EQ(u.violations.size(), 1u) << dump(u);
  EXPECT_EQ(u.violations[0].column, 10);
}

TEST(SecurityScan, ThresholdDecidesWhatBlocks) {
  auto policy = [](const char* threshold) {
    return custom(std::string(R"({"severity_threshold": ")") + threshold +
                  R"(", "patterns": [{"pattern": "\\bprint\\s*\\(", "description": "printing", "severity": "medium"}]})");
  };
  const std::string code = "print('hi')\n";
  EXPECT_FALSE(scan(policy("low"), "python", code).allowed);
  EXPECT_FALSE(scan(policy("medium"), "python", code).allowed);
  ScanReport high = scan(policy("high"), "python", code);
  EXPECT_TRUE(high.allowed);
  ASSERT_EQ(high.violations.size(), 1u);
  EXPECT_FALSE(high.violations[0].blocking);
  EXPECT_EQ(high.violations[0].severity, Severity::kMedium);
  EXPECT_TRUE(scan(policy("CRITICAL"), "python", code).allowed);
  SecurityPolicy crit = custom(R"({"severity_threshold": "critical", "patterns": [
      {"pattern": "\\bprint\\s*\\(", "description": "printing", "severity": "critical"}]})");
  EXPECT_FALSE(scan(crit, "python", code).allowed);
}

TEST(SecurityScan, ScopesDecideWhatAPatternSees) {
  const std::string code = "x = 'secret'\nopen('secret')\n# secret\n";
  auto count = [&](const char* pattern, const char* scope) {
    SecurityPolicy p = custom(std::string(R"({"patterns": [{"pattern": ")") + pattern +
                              R"(", "description": "d", "severity": "low", "scope": ")" + scope + R"("}]})");
    return scan(p, "python", code).violations.size();
  };
  EXPECT_EQ(count("secret", "code"), 0u);               // only in strings and a comment
  EXPECT_EQ(count("secret", "text"), 2u);               // the strings, never the comment
  EXPECT_EQ(count("secret", "code_and_strings"), 0u);   // a match must start in code
  EXPECT_EQ(count("open\\\\('secret", "code_and_strings"), 1u);
  EXPECT_EQ(count("open\\\\('secret", "code"), 0u);     // the argument is blanked there
}

TEST(SecurityScan, LanguageAliasesAndUnknownLanguages) {
  ScanReport alias = scan(preset("strict"), "py", "import subprocess\n");
  EXPECT_EQ(alias.language, "python");
  EXPECT_TRUE(has_module(alias, "subprocess"));
  // Unknown: unstripped, and only the language-independent rules apply.
  ScanReport unknown = scan(preset("strict"), "COBOL", "DISPLAY 'rm -rf /'. import subprocess\n");
  EXPECT_EQ(unknown.language, "cobol");
  EXPECT_TRUE(has_finding(unknown, "Recursive deletion")) << dump(unknown);
  EXPECT_FALSE(has_module(unknown, "subprocess")) << dump(unknown);
}

TEST(SecurityScan, EditedPolicyIsRecompiledAndBrokenOneFailsClosed) {
  SecurityPolicy p = preset("development");
  EXPECT_TRUE(scan(p, "python", "print(1)\n").allowed);
  p.patterns.push_back({R"(\bprint\s*\()", "printing", Severity::kHigh, {"python"}, Scope::kCode, 0});
  EXPECT_FALSE(scan(p, "python", "print(1)\n").allowed);
  p.patterns.push_back({"(", "broken", Severity::kLow, {}, Scope::kCode, 0});
  ScanReport r = scan(p, "python", "x = 1\n");
  EXPECT_FALSE(r.allowed);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].kind, "policy");
}

TEST(SecurityScan, FindingsPerRuleAreCapped) {
  std::string code;
  for (int i = 0; i < 100; ++i) code += "eval(x)\n";
  ScanReport r = scan(preset("production"), "python", code);
  EXPECT_EQ(r.violations.size(), 20u);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.allowed);
}

TEST(SecurityScan, EvasionChecksCanBeTurnedOff) {
  const std::string code = "ｅｖａｌ('1')\n";
  EXPECT_FALSE(scan(custom("{}"), "python", code).allowed);
  EXPECT_TRUE(scan(custom(R"({"evasion_checks": false})"), "python", code).allowed);
}

// ---------------------------------------------------------------------------------------
// Module rules: the ways each language names a module

void expect_module(const SecurityPolicy& p, const std::string& language, const std::string& module,
                   const std::vector<std::string>& caught, const std::vector<std::string>& not_caught) {
  for (const auto& code : caught) {
    ScanReport r = scan(p, language, code);
    EXPECT_TRUE(has_module(r, module)) << language << " should catch: " << code << "\n" << dump(r);
  }
  for (const auto& code : not_caught) {
    ScanReport r = scan(p, language, code);
    EXPECT_FALSE(has_module(r, module)) << language << " should not catch: " << code << "\n" << dump(r);
  }
}

TEST(ModuleRules, PythonImportFormsAndAliases) {
  expect_module(only_module("python", "os"), "python", "os",
                {"import os\n", "import os.path as p\n", "from os import system\n", "from os.path import join\n",
                 "__import__(\"os\")\n", "__import__('os.path')\n", "import importlib\nimportlib.import_module('os')\n",
                 "import_module(name='os')\n", "import sys, os\n", "import os as operating_system\n",
                 "from os import (\n    system,\n)\n", "import \\\n    os\n", "from os . path import join\n",
                 "import os . path\n", "from shutil import os\n", "x = 1; import os\n", "import json, \\\n  os\n"},
                {"import osmosis\n", "import cos\n", "from ossaudiodev import x\n", "os_x = 1\n", "import myos\n",
                 "__import__('osx')\n", "import a as os\n"});
}

TEST(ModuleRules, EveryModuleOfAStatementIsReported) {
  // One finding per restricted module, so a low-severity one cannot hide a high one.
  SecurityPolicy p = custom(R"({"severity_threshold": "medium", "restricted_modules": {
      "python": [{"name": "threading", "severity": "low"}, {"name": "os", "severity": "high"},
                 {"name": "pickle", "severity": "low"}],
      "go": [{"name": "fmt", "severity": "low"}, {"name": "unsafe", "severity": "high"},
             {"name": "net/http", "severity": "low"}]}})");
  ScanReport py = scan(p, "python", "import threading, os, pickle\n");
  EXPECT_FALSE(py.allowed);
  EXPECT_TRUE(has_module(py, "threading") && has_module(py, "os") && has_module(py, "pickle")) << dump(py);
  ScanReport go = scan(p, "go", "package main\nimport (\n\t\"fmt\"\n\t\"unsafe\"\n\th \"net/http\"\n)\n");
  EXPECT_FALSE(go.allowed);
  EXPECT_TRUE(has_module(go, "fmt") && has_module(go, "unsafe") && has_module(go, "net/http")) << dump(go);
}

TEST(ModuleRules, OtherLanguagesImportForms) {
  expect_module(only_module("javascript", "child_process"), "javascript", "child_process",
                {"require(\"node:child_process\")\n", "require(`child_process`)\n",
                 "import cp from 'child_process';\n", "import {exec} from \"child_process\";\n",
                 "import * as cp from 'node:child_process';\n", "export { exec } from 'child_process';\n",
                 "const m = await import('child_process');\n", "import {\n  exec,\n  spawn\n} from 'child_process';\n",
                 "require('child_process/x')\n"},
                {"require('child_processes')\n", "require('my_child_process')\n", "child_process.exec()\n"});
  expect_module(only_module("go", "os/exec"), "go", "os/exec",
                {"import \"os/exec\"\n", "import ex \"os/exec\"\n", "import `os/exec`\n",
                 "import (\n\t\"fmt\" // printing\n\tex \"os/exec\"\n)\n", "import (\"fmt\"; \"os/exec\")\n"},
                {"import \"os/execute\"\n", "import \"fmt\"\nvar x = \"os/exec\"\n"});
  expect_module(only_module("java", "java.net"), "java", "java.net",
                {"import java.net.Socket;\n", "import java.net.*;\n", "import static java.net.URLEncoder.encode;\n",
                 "class A { java.net.Socket s; }\n", "import java . net . Socket;\n", "import java.net.http.HttpClient;\n"},
                {"import java.netty.Channel;\n", "import java.util.List;\n"});
  expect_module(only_module("cpp", "sys/socket.h"), "cpp", "sys/socket.h",
                {"#include <sys/socket.h>\n", "#include \"sys/socket.h\"\n", "  #  include<sys/socket.h>\n",
                 "%:include <sys/socket.h>\n", "#import <sys/socket.h>\n", "#include /* c */ <sys/socket.h>\n"},
                {"#include <sys/socket_x.h>\n", "#include <cstdio>\n"});
  expect_module(only_module("r", "processx"), "r", "processx",
                {"library(processx)\n", "library(\"processx\")\n", "require(processx)\n",
                 "requireNamespace(\"processx\")\n", "x <- processx::run('id')\n", "processx:::internal()\n"},
                {"library(processxx)\n", "library(ggplot2)\n"});
  expect_module(only_module("ruby", "open3"), "ruby", "open3",
                {"require 'open3'\n", "require \"open3\"\n", "require('open3')\n", "load 'open3.rb'\n"},
                {"require 'open3x'\n", "require 'json'\n"});
  expect_module(only_module("bash", "curl"), "bash", "curl",
                {"curl x\n", "/usr/bin/curl x\n", "y=$(curl x)\n", "y=`curl x`\n", "\\curl x\n", "sudo curl x\n",
                 "echo a | curl -d @- x\n"},
                {"curly x\n", "my-curl x\n", "echo $curl\n", "cat curl.txt\n"});
}

// ---------------------------------------------------------------------------------------
// Known ways around a pattern scanner. What matters for each is asserted as it is: caught
// (usually by a broader rule than the obvious one), or missed. Every miss is a documented
// limit of static scanning: the kernel isolation (namespaces, seccomp, cgroups, no network)
// is the security boundary, the scanner is advisory defence in depth.

TEST(KnownBypasses, GetattrOnBuiltinsWithASplitName) {
  const std::string code = "getattr(__builtins__, 'ev'+'al')('1+1')\n";
  ScanReport strict = scan(preset("strict"), "python", code);
  EXPECT_FALSE(strict.allowed);
  EXPECT_TRUE(has_finding(strict, "Dynamic attribute access")) << dump(strict);
  EXPECT_TRUE(has_finding(strict, "introspection")) << dump(strict);
  EXPECT_FALSE(scan(preset("production"), "python", code).allowed);  // the __builtins__ rule
  // MISSED by development: it has no introspection rules. Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("development"), "python", code).allowed);
}

TEST(KnownBypasses, ImportModuleWithAComputedName) {
  const std::string code = "import importlib\nimportlib.import_module('o'+'s').system('id')\n";
  for (const char* p : {"strict", "production", "data_science", "web_scraping"}) {
    ScanReport r = scan(preset(p), "python", code);
    EXPECT_FALSE(r.allowed) << p;
    EXPECT_TRUE(has_finding(r, "computed module name")) << p << "\n" << dump(r);
    EXPECT_FALSE(has_module(r, "os")) << "the module rule itself cannot see 'o'+'s'";
  }
  // MISSED by development (no dynamic-import rule). Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("development"), "python", code).allowed);
}

TEST(KnownBypasses, ExecOfABase64DecodedPayload) {
  const std::string code =
      "import base64\nexec(base64.b64decode('aW1wb3J0IG9zOyBvcy5zeXN0ZW0oImlkIik='))\n";  // import os; os.system("id")
  EXPECT_TRUE(has_finding(scan(preset("strict"), "python", code), "Dynamic code execution"));
  EXPECT_FALSE(scan(preset("strict"), "python", code).allowed);
  EXPECT_FALSE(scan(preset("production"), "python", code).allowed);  // exec(
  // MISSED by data_science: it restricts os and subprocess, but the decoded payload that
  // imports them is invisible to any static scan. Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("data_science"), "python", code).allowed);
}

TEST(KnownBypasses, GlobalsLookupWithASplitName) {
  const std::string code = "globals()['__built' + 'ins__'].eval('1')\n";
  for (const char* p : {"strict", "production", "data_science"}) {
    ScanReport r = scan(preset(p), "python", code);
    EXPECT_FALSE(r.allowed) << p;
    EXPECT_TRUE(has_finding(r, "globals()[...]")) << p << "\n" << dump(r);
  }
  // MISSED by development. Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("development"), "python", code).allowed);
}

TEST(KnownBypasses, SubclassWalkToReachBuiltins) {
  const std::string code = "().__class__.__bases__[0].__subclasses__()\n";
  EXPECT_FALSE(scan(preset("production"), "python", code).allowed);
  EXPECT_TRUE(scan(preset("development"), "python", code).allowed);  // MISSED: kernel isolation is the boundary
}

TEST(KnownBypasses, ModuleReachedThroughAnotherModule) {
  // shutil re-exports os: the os.system call pattern still sees `os.system(`.
  const std::string code = "import shutil\nshutil.os.system('id')\n";
  EXPECT_FALSE(scan(preset("development"), "python", code).allowed);
  EXPECT_TRUE(has_module(scan(only_module("python", "os"), "python", "from shutil import os\n"), "os"));
}

TEST(KnownBypasses, OsSystemReferencedInsteadOfCalled) {
  // The rule matches the reference, not the call, so aliasing or parenthesising it does not help.
  EXPECT_FALSE(scan(preset("development"), "python", "import os\nrun = os.system\nrun('id')\n").allowed);
  EXPECT_FALSE(scan(preset("development"), "python", "import os\n(os . system)('id')\n").allowed);
}

TEST(KnownBypasses, FromImportUnderAnotherName) {
  const std::string code = "from os import system as run\nrun('id')\n";
  EXPECT_FALSE(scan(preset("strict"), "python", code).allowed);  // module os
  // MISSED by development: only os.system(...) calls are rules there, and `run('id')` is not
  // one. Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("development"), "python", code).allowed);
}

TEST(KnownBypasses, UnicodeTricksAreReportedAsEvasions) {
  // Python NFKC-normalises identifiers: ｅｖａｌ is eval. Refused by every preset.
  for (const auto& p : SecurityPolicy::preset_names()) {
    ScanReport r = scan(preset(p), "python", "ｅｖａｌ('__import__(\"os\").system(\"id\")')\n");
    EXPECT_FALSE(r.allowed) << p;
    EXPECT_TRUE(has_finding(r, "NFKC")) << dump(r);
  }
  // UTF-7 source: `#+AAo-` is a newline to Python, so the "comment" below runs.
  ScanReport utf7 = scan(preset("minimal"), "python", "# -*- coding: utf_7 -*-\nx = 1 #+AAo-print('hidden')\n");
  EXPECT_FALSE(utf7.allowed);
  ASSERT_FALSE(utf7.violations.empty());
  EXPECT_EQ(utf7.violations[0].severity, Severity::kCritical);
  // JavaScript identifiers may contain escapes: \u0065val is eval.
  EXPECT_FALSE(scan(preset("development"), "javascript", "\\u0065val('1+1')\n").allowed);
  // Java decodes \u escapes before comments: this "comment" is code, on line 1.
  ScanReport java = scan(preset("development"), "java",
                         "class A { void f() throws Exception { // \\u000a Runtime.getRuntime().exec(\"id\");\n} }\n");
  EXPECT_FALSE(java.allowed) << dump(java);
  ASSERT_FALSE(java.violations.empty());
  EXPECT_EQ(java.violations[0].line, 1);
}

TEST(KnownBypasses, JavascriptComputedRequireAndConstructorChain) {
  const std::string req = "const m = require('child_' + 'process');\nm.exec(cmd);\n";
  EXPECT_FALSE(scan(preset("production"), "javascript", req).allowed);
  EXPECT_TRUE(has_finding(scan(preset("strict"), "javascript", req), "computed module name"));
  EXPECT_TRUE(scan(preset("development"), "javascript", req).allowed);  // MISSED: kernel isolation is the boundary
  const std::string ctor = "const p = this.constructor.constructor('return process')();\n";
  EXPECT_FALSE(scan(preset("production"), "javascript", ctor).allowed);
  EXPECT_TRUE(scan(preset("development"), "javascript", ctor).allowed);  // MISSED: kernel isolation is the boundary
}

TEST(KnownBypasses, RubyAndRDispatchByComputedName) {
  const std::string ruby = "Object.send('sys' + 'tem', 'id')\n";
  EXPECT_FALSE(scan(preset("strict"), "ruby", ruby).allowed);     // any send(...)
  EXPECT_TRUE(scan(preset("production"), "ruby", ruby).allowed);  // MISSED: kernel isolation is the boundary
  EXPECT_FALSE(scan(preset("production"), "ruby", "Kernel.send(:system, 'id')\n").allowed);  // a literal name
  const std::string r = "f <- get(paste0('sys', 'tem'))\nf('id')\n";
  EXPECT_FALSE(scan(preset("strict"), "r", r).allowed);     // any get(...)
  EXPECT_TRUE(scan(preset("production"), "r", r).allowed);  // MISSED: kernel isolation is the boundary
  EXPECT_FALSE(scan(preset("production"), "r", "get('system')('id')\n").allowed);  // a literal name
}

TEST(KnownBypasses, ShellQuotingSplitsACommandName) {
  // c''url is curl to bash. MISSED even by strict: kernel isolation (no network) is the boundary.
  EXPECT_TRUE(scan(preset("strict"), "bash", "c''url -s https://example.com\n").allowed);
  EXPECT_TRUE(scan(preset("strict"), "bash", "$(printf '\\x63url') https://example.com\n").allowed);
  // A decoded payload piped into a shell is caught by its shape.
  ScanReport piped = scan(preset("development"), "bash", "echo Y3VybCB4 | base64 -d | sh\n");
  EXPECT_TRUE(piped.allowed);  // development does not restrict shells
  EXPECT_FALSE(scan(preset("production"), "bash", "echo Y3VybCB4 | base64 -d | sh\n").allowed);
}

TEST(KnownBypasses, CppTokenPastingBuildsANameThePreprocessorSees) {
  const std::string code = "#define CAT(a, b) a##b\nint main() { return CAT(sys, tem)(\"id\"); }\n";
  // MISSED even by strict: only the preprocessor sees `system(`. Kernel isolation is the boundary.
  EXPECT_TRUE(scan(preset("strict"), "cpp", code).allowed);
}

// ---------------------------------------------------------------------------------------
// JSON

TEST(SecurityPolicyJson, ParsesEveryFieldAndRoundTrips) {
  SecurityPolicy p = custom(R"({
    "name": "mine", "description": "d", "severity_threshold": "high", "evasion_checks": false,
    "patterns": [{"pattern": "(^|[^.])(danger)\\b", "description": "danger", "severity": "critical",
                  "languages": ["py", "node"], "scope": "text", "report_group": 2}],
    "restricted_modules": {"python": [{"name": "os", "description": "OS", "severity": "medium"}],
                           "golang": [{"name": "os/exec", "severity": "high"}]},
    "libraries": {"allowed": ["pandas*"], "blocked": ["evil*"]}})");
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.severity_threshold, Severity::kHigh);
  EXPECT_FALSE(p.evasion_checks);
  ASSERT_EQ(p.patterns.size(), 1u);
  EXPECT_EQ(p.patterns[0].languages, (std::vector<std::string>{"python", "javascript"}));
  EXPECT_EQ(p.patterns[0].scope, Scope::kText);
  EXPECT_EQ(p.patterns[0].report_group, 2);
  ASSERT_EQ(p.restricted_modules.count("go"), 1u);
  EXPECT_EQ(p.restricted_modules["go"][0].description, "restricted module");
  EXPECT_EQ(p.libraries.blocked, std::vector<std::string>{"evil*"});
  ScanReport r = scan(p, "python", "x = 'danger'\n");
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].column, 6);  // the report group
  auto again = SecurityPolicy::from_json(p.to_json());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->to_json(), p.to_json());
}

TEST(SecurityPolicyJson, PresetsRoundTripThroughJson) {
  const std::string code = "import os, subprocess\neval(x)\nopen('f', 'w')\n";
  for (const auto& name : SecurityPolicy::preset_names()) {
    SecurityPolicy p = preset(name);
    auto again = SecurityPolicy::from_json(p.to_json());
    ASSERT_TRUE(again.ok()) << name << ": " << again.status().to_string();
    EXPECT_EQ(again->to_json(), p.to_json()) << name;
    EXPECT_EQ(scan(*again, "python", code).to_json(), scan(p, "python", code).to_json()) << name;
  }
}

TEST(SecurityPolicyJson, ExtendsAPresetAndAddsRules) {
  SecurityPolicy p = custom(R"({"extends": "data_science", "name": "ds-no-print",
      "patterns": [{"pattern": "\\bprint\\s*\\(", "description": "no printing", "severity": "high"}]})");
  EXPECT_EQ(p.name, "ds-no-print");
  EXPECT_EQ(p.severity_threshold, Severity::kMedium);
  EXPECT_FALSE(scan(p, "python", "print(1)\n").allowed);
  EXPECT_FALSE(scan(p, "python", "import subprocess\n").allowed);
  EXPECT_TRUE(scan(p, "python", "import pandas as pd\n").allowed);
}

struct BadJson {
  const char* json;
  const char* field;
  const char* message_part;
};

class SecurityPolicyRejects : public ::testing::TestWithParam<BadJson> {};

TEST_P(SecurityPolicyRejects, NamesTheField) {
  auto p = SecurityPolicy::from_json_text(GetParam().json);
  ASSERT_FALSE(p.ok()) << GetParam().json;
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument) << p.status().to_string();
  EXPECT_EQ(p.status().field(), GetParam().field) << p.status().to_string();
  EXPECT_NE(p.status().message().find(GetParam().message_part), std::string::npos) << p.status().to_string();
}

#define PAT(extra) R"({"patterns": [{"pattern": "x", "description": "d", "severity": "low")" extra "}]}"

INSTANTIATE_TEST_SUITE_P(
    All, SecurityPolicyRejects,
    ::testing::Values(
        BadJson{R"({"bogus": 1})", "bogus", "unknown field"},
        BadJson{R"([])", "(top level)", "object"},
        BadJson{R"({"severity_threshold": "severe"})", "severity_threshold", "low, medium, high, critical"},
        BadJson{R"({"severity_threshold": 3})", "severity_threshold", "string"},
        BadJson{R"({"evasion_checks": "yes"})", "evasion_checks", "boolean"},
        BadJson{R"({"patterns": {}})", "patterns", "array"},
        BadJson{R"({"patterns": [{"pattern": "(", "description": "d", "severity": "low"}]})", "patterns[0].pattern",
                "not a valid regular expression"},
        BadJson{R"({"patterns": [{"description": "d", "severity": "low"}]})", "patterns[0].pattern", "required"},
        BadJson{R"({"patterns": [{"pattern": "x", "severity": "low"}]})", "patterns[0].description", "required"},
        BadJson{R"({"patterns": [{"pattern": "x", "description": "d"}]})", "patterns[0].severity", "required"},
        BadJson{PAT(R"(, "languages": ["cobol"])"), "patterns[0].languages[0]", "unknown language"},
        BadJson{PAT(R"(, "scope": "strings")"), "patterns[0].scope", "code, code_and_strings, text"},
        BadJson{PAT(R"(, "flags": "i")"), "patterns[0].flags", "unknown field"},
        BadJson{PAT(R"(, "report_group": 2)"), "patterns[0].report_group", "groups"},
        BadJson{R"({"patterns": [{"pattern": "x*", "description": "d", "severity": "low"}]})", "patterns[0].pattern",
                "empty string"},
        BadJson{R"({"restricted_modules": {"cobol": []}})", "restricted_modules.cobol", "unknown language"},
        BadJson{R"({"restricted_modules": {"python": {"name": "os"}}})", "restricted_modules.python", "array"},
        BadJson{R"({"restricted_modules": {"python": [{"name": "os; rm", "severity": "high"}]}})",
                "restricted_modules.python[0].name", "not a module name"},
        BadJson{R"({"restricted_modules": {"python": [{"name": "os"}]}})", "restricted_modules.python[0].severity",
                "required"},
        BadJson{R"({"restricted_modules": {"python": [{"name": "os", "severity": "high", "level": 1}]}})",
                "restricted_modules.python[0].level", "unknown field"},
        BadJson{R"({"libraries": {"allowed": "x"}})", "libraries.allowed", "array"},
        BadJson{R"({"libraries": {"deny": []}})", "libraries.deny", "unknown field"},
        BadJson{R"({"libraries": {"blocked": [""]}})", "libraries.blocked[0]", "empty"},
        BadJson{R"({"extends": "paranoid"})", "extends", "unknown security preset"}));

#undef PAT

TEST(SecurityPolicyJson, FilesAndLoad) {
  char path[] = "/tmp/corral-secpol-XXXXXX.json";
  int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  const std::string body = R"({"extends": "strict", "severity_threshold": "high"})";
  ASSERT_EQ(write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
  close(fd);
  auto f = SecurityPolicy::load(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->name, "strict");
  EXPECT_EQ(f->severity_threshold, Severity::kHigh);
  auto s = SecurityPolicy::load("strict");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->severity_threshold, Severity::kLow);
  auto none = SecurityPolicy::load("paranoid");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("neither a preset"), std::string::npos) << none.status().to_string();
  unlink(path);
  auto missing = SecurityPolicy::from_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().field(), path);
}

// ---------------------------------------------------------------------------------------
// Libraries and reports

TEST(CheckLibraries, BlockedAndAllowedGlobs) {
  SecurityPolicy p = custom(R"({"name": "libs", "libraries": {"allowed": ["pandas*", "/opt/libs/*"], "blocked": ["evil*"]}})");
  EXPECT_TRUE(check_libraries(p, {"pandas", "pandas==2.1", "/home/u/pandas-2.1.tar.gz", "/opt/libs/x", "PANDAS"}).ok());
  Status not_allowed = check_libraries(p, {"requests"});
  EXPECT_EQ(not_allowed.field(), "libraries[0]");
  EXPECT_NE(not_allowed.message().find("allows"), std::string::npos) << not_allowed.to_string();
  Status blocked = check_libraries(p, {"pandas", "evil-pkg"});
  EXPECT_EQ(blocked.field(), "libraries[1]");
  EXPECT_NE(blocked.message().find("blocked"), std::string::npos) << blocked.to_string();
  // Paths are normalised before matching: this one is not under /opt/libs.
  EXPECT_FALSE(check_libraries(p, {"/opt/libs/../secret/x"}).ok());
}

TEST(CheckLibraries, StrictRefusesEveryInstallOthersAllowThem) {
  EXPECT_FALSE(check_libraries(preset("strict"), {"numpy"}).ok());
  EXPECT_TRUE(check_libraries(preset("strict"), {}).ok());
  EXPECT_TRUE(check_libraries(preset("data_science"), {"numpy", "/tmp/pkg"}).ok());
}

TEST(ScanReport, SummaryTextAndJson) {
  ScanReport refused = scan(preset("strict"), "python", "import subprocess\nexec(x)\n");
  EXPECT_EQ(refused.summary().rfind("refused by security policy 'strict': 2 blocking findings: line 1:8 module "
                                    "'subprocess': Subprocess management (high); line 2:1 ",
                                    0),
            0u)
      << refused.summary();
  EXPECT_NE(refused.to_text("main.py").find("main.py:1:8: high, blocking: module 'subprocess'"), std::string::npos)
      << refused.to_text("main.py");
  nlohmann::json j = refused.to_json();
  EXPECT_EQ(j["allowed"], false);
  EXPECT_EQ(j["policy"], "strict");
  EXPECT_EQ(j["threshold"], "low");
  ASSERT_EQ(j["violations"].size(), 2u);
  EXPECT_EQ(j["violations"][0]["rule"], "subprocess");
  EXPECT_EQ(j["violations"][0]["severity"], "high");
  EXPECT_EQ(j["violations"][0]["excerpt"], "import subprocess");
  EXPECT_EQ(scan(preset("development"), "python", "print(1)\n").summary(), "allowed by security policy 'development'");
  EXPECT_EQ(scan(preset("data_science"), "python", "import requests\n").summary(),
            "allowed by security policy 'data_science' (1 finding below the 'medium' threshold)");
}

}  // namespace
}  // namespace corral::security
