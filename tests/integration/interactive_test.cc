// Interactive sessions on the native backend: state across runs (Python and JavaScript),
// exceptions leaving the state usable, an interrupted timeout keeping the state, the last
// expression's value, stdin and streaming, commands and files beside the driver — and the
// detached exec under it. What every backend must do alike (among it a run that ignores the
// interrupt, and the output cap) is in tests/contract/interactive_contract_test.cc, which
// runs on native too.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "seccomp/compiler.h"
#include "src/session/session.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

class Interactive : public SandboxTest {
 protected:
  std::unique_ptr<Session> open(const std::string& language = "python") {
    SessionOptions o;
    o.language = language;
    o.interactive = true;
    auto s = Session::open(executor_, std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Runs and expects the run to have happened (a Status error fails the test).
  ExecResult run(Session& s, const std::string& code, RunOptions o = {}) {
    auto r = s.run(code, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }
  static RunOptions timeout(uint64_t ms) {
    RunOptions o;
    o.timeout_ms = ms;
    return o;
  }
};

TEST_F(Interactive, PythonStatePersistsAcrossRuns) {
  auto s = open();
  ASSERT_TRUE(s);
  auto a = run(*s,
               "import math\n"
               "x = 41\n"
               "def double(v):\n    return 2 * v\n"
               "class Box:\n    def __init__(self, v): self.v = v\n"
               "log = open('log.txt', 'w')\n"
               "log.write('first ')\n"
               "x + 1\n");
  EXPECT_EQ(a.status(), ExecStatus::kOk) << a.stderr_data;
  EXPECT_EQ(a.value, std::optional<std::string>("42"));
  EXPECT_EQ(a.stage, "run");
  // Variables, imports, functions, classes and an open file are all still there.
  auto b = run(*s, "log.write('second'); log.flush()\nprint(double(x), math.pi > 3, Box(x).v)\n");
  EXPECT_EQ(b.status(), ExecStatus::kOk) << b.stderr_data;
  EXPECT_EQ(b.stdout_data, "82 True 41\n");
  EXPECT_FALSE(b.value.has_value());
  auto c = s->execute_command("cat log.txt");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->stdout_data, "first second");
}

TEST_F(Interactive, LastExpressionValueIsItsRepr) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(run(*s, "{'a': [1, 2.5, 'x']}").value, std::optional<std::string>("{'a': [1, 2.5, 'x']}"));
  EXPECT_EQ(run(*s, "'text'").value, std::optional<std::string>("'text'"));
  EXPECT_EQ(run(*s, "_ * 2").value, std::optional<std::string>("'texttext'")) << "`_` is the last value";
  EXPECT_FALSE(run(*s, "None").value.has_value());
  EXPECT_FALSE(run(*s, "y = 3").value.has_value());
  EXPECT_FALSE(run(*s, "print('printed')").value.has_value());
  EXPECT_EQ(run(*s, "import asyncio\nawait asyncio.sleep(0)\ny + 1").value, std::optional<std::string>("4"))
      << "top-level await";
  nlohmann::json j = run(*s, "y").to_json();
  EXPECT_EQ(j["value"], "3");
  EXPECT_FALSE(run(*s, "pass").to_json().contains("value"));
}

TEST_F(Interactive, ExceptionsLeaveTheStateUsable) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "total = 10");
  auto e = run(*s, "total += 5\nraise ValueError('bad input')\n");
  EXPECT_EQ(e.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(e.message, "ValueError: bad input");
  EXPECT_NE(e.stderr_data.find("Traceback (most recent call last)"), std::string::npos) << e.stderr_data;
  EXPECT_NE(e.stderr_data.find("<cell-2>"), std::string::npos) << e.stderr_data;
  EXPECT_EQ(e.stderr_data.find("python_driver"), std::string::npos) << "the driver's frames are not shown";
  auto syntax = run(*s, "def broken(:\n");
  EXPECT_EQ(syntax.status(), ExecStatus::kNonzeroExit);
  EXPECT_NE(syntax.stderr_data.find("SyntaxError"), std::string::npos) << syntax.stderr_data;
  // What ran before the exception stays done.
  EXPECT_EQ(run(*s, "total").value, std::optional<std::string>("15"));
  // sys.exit() ends the run, not the interpreter.
  auto exited = run(*s, "import sys\nsys.exit(3)");
  EXPECT_EQ(exited.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(run(*s, "total").value, std::optional<std::string>("15"));
}

TEST_F(Interactive, TimeoutInterruptsTheRunAndKeepsTheState) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "kept = 'yes'");
  auto t = run(*s, "import time\nprogress = 0\nwhile True:\n    progress += 1\n    time.sleep(0.01)\n", timeout(600));
  EXPECT_EQ(t.status(), ExecStatus::kTimeout);
  EXPECT_NE(t.message.find("interrupted"), std::string::npos) << t.message;
  EXPECT_NE(t.message.find("state were kept"), std::string::npos) << t.message;
  EXPECT_NE(t.stderr_data.find("KeyboardInterrupt"), std::string::npos) << t.stderr_data;
  EXPECT_LT(t.usage.wall_ms, 600 + InteractiveRunner::kInterruptGraceMs + 1000);
  // The state from before and what the interrupted run did are both there.
  auto after = run(*s, "(kept, progress > 10)");
  EXPECT_EQ(after.status(), ExecStatus::kOk) << after.stderr_data;
  EXPECT_EQ(after.value, std::optional<std::string>("('yes', True)"));
  EXPECT_TRUE(after.message.empty()) << after.message;
}

TEST_F(Interactive, InterpreterThatExitsIsReportedAndReplaced) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "kept = 1");
  auto gone = run(*s, "import os\nprint('bye', flush=True)\nos._exit(7)");
  EXPECT_EQ(gone.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(gone.stdout_data, "bye\n");
  EXPECT_NE(gone.message.find("state is lost"), std::string::npos) << gone.message;
  auto next = run(*s, "'kept' in globals()");
  EXPECT_EQ(next.value, std::optional<std::string>("False"));
  EXPECT_NE(next.message.find("fresh one"), std::string::npos) << next.message;
}

TEST_F(Interactive, SeccompKillInARunIsReportedToThatRun) {
  // The python profile, but killing on getppid.
  char dir[] = "/tmp/corral-seccomp-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/kill-getppid.json";
  nlohmann::json prof = nlohmann::json::parse(std::ifstream(seccomp::profile_dir() + "/python.json"));
  prof["name"] = "kill-getppid";
  for (auto& rule : prof["rules"]) {
    auto& names = rule["names"];
    names.erase(std::remove(names.begin(), names.end(), "getppid"), names.end());
  }
  prof["rules"].push_back({{"names", {"getppid"}}, {"action", "kill"}});
  std::ofstream(path) << prof.dump();
  SessionOptions o;
  o.interactive = true;
  o.policy = policy(R"({"seccomp": ")" + path + R"("})");
  auto s = Session::open(executor_, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  run(**s, "kept = 1");
  auto r = run(**s, "import os\nprint('before', flush=True)\nos.getppid()\n");
  std::remove(path.c_str());
  rmdir(dir);
  EXPECT_EQ(r.status(), ExecStatus::kSeccompViolation) << r.message << r.stderr_data;
  EXPECT_NE(r.message.find("getppid"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("state is lost"), std::string::npos) << r.message;
  EXPECT_EQ(r.stdout_data, "before\n");
  auto next = run(**s, "'kept' in globals()");
  EXPECT_EQ(next.value, std::optional<std::string>("False")) << next.message << next.stderr_data;
}

TEST_F(Interactive, StdinStreamingSubprocessesCommandsAndFiles) {
  auto s = open();
  ASSERT_TRUE(s);
  RunOptions o;
  o.stdin_data = "typed line\n";
  std::string streamed;
  o.on_stdout = [&](std::string_view d) { streamed.append(d); };
  auto r = run(*s, "name = input()\nprint('got', name)\nimport os\nos.system('echo from a subprocess')\n", o);
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "got typed line\nfrom a subprocess\n");
  EXPECT_EQ(streamed, r.stdout_data);
  // Files and commands work beside the driver, which keeps its state through them.
  ASSERT_TRUE(s->put_files({{"data.txt", "from the host", 0644}}).ok());
  EXPECT_EQ(run(*s, "open('data.txt').read() + ' / ' + name").value,
            std::optional<std::string>("'from the host / typed line'"));
  auto c = s->execute_command("echo command ran; ls data.txt");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->stdout_data, "command ran\ndata.txt\n");
  run(*s, "open('made.txt', 'w').write(name)");
  auto got = s->get_files({"made.txt"}, 1024);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ((*got)[0].data, "typed line");
  EXPECT_EQ(run(*s, "name").value, std::optional<std::string>("'typed line'"));
}

TEST_F(Interactive, ProcessesARunStartsEndWithTheRun) {
  auto s = open();
  ASSERT_TRUE(s);
  auto r = run(*s, "import subprocess\nchild = subprocess.Popen(['sleep', '100'])\nchild.pid");
  ASSERT_TRUE(r.value.has_value()) << r.stderr_data;
  auto alive = run(*s, "child.poll() is None or child.returncode");
  EXPECT_EQ(alive.value, std::optional<std::string>("-9")) << "killed at the end of the run that started it";
}

TEST_F(Interactive, MatplotlibFiguresComeBackWithTheirRun) {
  auto s = open();
  ASSERT_TRUE(s);
  auto r = run(*s, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n");  // not shown: saved at the end of the run
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  ASSERT_EQ(r.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts[0].mime, "image/png");
  auto again = run(*s, "plt.bar(['a'], [1]); plt.show()");
  ASSERT_EQ(again.artifacts.size(), 1u);
  EXPECT_NE(again.artifacts[0].name, r.artifacts[0].name);
  EXPECT_TRUE(run(*s, "1").artifacts.empty());
}

TEST_F(Interactive, LibrariesInstalledIntoARunningInterpreter) {
  char tmpl[] = "/tmp/corral-interactive-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  chmod(dir.c_str(), 0755);
  auto host = [&](const std::string& cmd) { return system(("cd " + dir + " && " + cmd + " >/dev/null 2>&1").c_str()); };
  ASSERT_EQ(host("mkdir -p greet pkg/package && printf \"[build-system]\\nrequires=['setuptools']\\n"
                 "build-backend='setuptools.build_meta'\\n[project]\\nname='greet'\\nversion='1.0'\\n\" "
                 "> greet/pyproject.toml && echo \"def hi(): return 'hi from greet'\" > greet/greet.py && "
                 "echo '{\"name\": \"jgreet\", \"version\": \"1.0.0\", \"main\": \"index.js\"}' > pkg/package/package.json && "
                 "echo \"module.exports = () => 'hi from jgreet';\" > pkg/package/index.js && "
                 "tar -czf jgreet-1.0.0.tgz -C pkg package"),
            0);
  const bool wheel = host("/usr/bin/python3 -m pip wheel --no-deps --no-build-isolation --no-index -w wheels ./greet") == 0;
  if (wheel) {
    auto py = open();
    ASSERT_TRUE(py);
    run(*py, "kept = 1\ntry:\n    import greet\nexcept ImportError:\n    pass\n");  // not there yet
    RunOptions o;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/wheels")) o.libraries = {e.path()};
    auto r = run(*py, "import greet\n(greet.hi(), kept)", o);
    EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data;
    EXPECT_EQ(r.value, std::optional<std::string>("('hi from greet', 1)"));
  }
  auto js = open("javascript");
  ASSERT_TRUE(js);
  run(*js, "let kept = 1");
  RunOptions o;
  o.libraries = {dir + "/jgreet-1.0.0.tgz"};
  auto r = run(*js, "[require('jgreet')(), kept]", o);
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stage << " " << r.stderr_data;
  EXPECT_EQ(r.value, std::optional<std::string>("[ 'hi from jgreet', 1 ]"));
  std::filesystem::remove_all(dir);
  if (!wheel) GTEST_SKIP() << "python part skipped: cannot build a wheel on this host";
}

TEST_F(Interactive, OnlyForLanguagesWithADriver) {
  SessionOptions o;
  o.language = "cpp";
  o.interactive = true;
  auto s = Session::open(executor_, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.status().field(), "interactive");
  EXPECT_NE(s.status().message().find("python"), std::string::npos) << s.status().to_string();
}

TEST_F(Interactive, JavaScriptStatePersistsAcrossRuns) {
  auto s = open("javascript");
  ASSERT_TRUE(s);
  auto a = run(*s, "const fs = require('fs');\nlet n = 41;\nfunction inc(v) { return v + 1; }\ninc(n)");
  EXPECT_EQ(a.status(), ExecStatus::kOk) << a.stderr_data;
  EXPECT_EQ(a.value, std::optional<std::string>("42"));
  auto b = run(*s, "console.log('n is', n); fs.writeFileSync('js.txt', String(inc(n)));\n({ n, list: [1, 'a'] })");
  EXPECT_EQ(b.status(), ExecStatus::kOk) << b.stderr_data;
  EXPECT_EQ(b.stdout_data, "n is 41\n");
  EXPECT_EQ(b.value, std::optional<std::string>("{ n: 41, list: [ 1, 'a' ] }"));
  EXPECT_FALSE(run(*s, "undefined").value.has_value());
  auto e = run(*s, "n = 7; throw new TypeError('nope')");
  EXPECT_EQ(e.status(), ExecStatus::kNonzeroExit);
  EXPECT_NE(e.stderr_data.find("TypeError: nope"), std::string::npos) << e.stderr_data;
  EXPECT_EQ(run(*s, "n").value, std::optional<std::string>("7"));
  EXPECT_EQ(run(*s, "await new Promise(r => setTimeout(() => r(n * 2), 10))").value,
            std::optional<std::string>("14"));
  auto t = run(*s, "globalThis.spins = 0; while (true) { spins++; }", timeout(500));
  EXPECT_EQ(t.status(), ExecStatus::kTimeout);
  EXPECT_NE(t.message.find("state were kept"), std::string::npos) << t.message;
  auto after = run(*s, "[n, spins > 0]");
  EXPECT_EQ(after.value, std::optional<std::string>("[ 7, true ]")) << after.stderr_data << after.message;
}

// The executor primitive under the driver.
class DetachedExec : public SandboxTest {};

TEST_F(DetachedExec, RunsOnAcrossExecsWhoseOwnProcessesStillEnd) {
  auto sb = executor_.create(SandboxSpec{policy()});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest start;
  start.argv = {"/bin/sh", "-c", "echo started; echo $$ > /tmp/daemon.pid; exec >/dev/null 2>&1; exec sleep 1000"};
  auto d = executor_.exec_detached(**sb, start);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->status(), ExecStatus::kOk) << d->message << d->stderr_data;
  EXPECT_EQ(d->exit_code, -1);
  EXPECT_EQ(d->stdout_data, "started\n");
  EXPECT_NE(d->message.find("running detached"), std::string::npos) << d->message;
  // An ordinary exec leaves a background process behind: it ends with that exec, the
  // detached program does not.
  ExecRequest leave;
  leave.argv = {"/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $! > /tmp/straggler.pid"};
  auto l = executor_.exec(**sb, leave);
  ASSERT_TRUE(l.ok());
  ExecRequest check;
  check.argv = {"/bin/sh", "-c", "kill -0 $(cat /tmp/daemon.pid) && echo daemon alive; "
                                 "kill -0 $(cat /tmp/straggler.pid) 2>/dev/null || echo straggler gone"};
  auto c = executor_.exec(**sb, check);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->stdout_data, "daemon alive\nstraggler gone\n") << c->stderr_data;
  // One detached program per sandbox.
  auto second = executor_.exec_detached(**sb, start);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->status(), ExecStatus::kSetupError);
  EXPECT_NE(second->message.find("already running"), std::string::npos) << second->message;
  // Once it exits, another may start.
  ExecRequest stop;
  // (A zombie still answers kill -0: the loop ends once init has reaped it.)
  stop.argv = {"/bin/sh", "-c", "p=$(cat /tmp/daemon.pid); kill $p; while kill -0 $p 2>/dev/null; do sleep 0.01; done"};
  stop.wall_ms = 5000;
  auto stopped = executor_.exec(**sb, stop);
  ASSERT_TRUE(stopped.ok()) << stopped.status().to_string();
  EXPECT_EQ(stopped->status(), ExecStatus::kOk) << stopped->message << stopped->stderr_data;
  auto third = executor_.exec_detached(**sb, start);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->status(), ExecStatus::kOk) << third->message;
  // A program that exits instead of detaching is an ordinary result.
  ExecRequest fails;
  fails.argv = {"/bin/sh", "-c", "echo no >&2; exit 4"};
  ASSERT_TRUE(executor_.exec(**sb, stop).ok());
  auto f = executor_.exec_detached(**sb, fails);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(f->exit_code, 4);
  EXPECT_EQ(f->stderr_data, "no\n");
  EXPECT_TRUE(executor_.destroy(**sb).ok());
}

}  // namespace
}  // namespace corral::testing
