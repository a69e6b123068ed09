// Interactive sessions on every backend: one interpreter per session (started with
// Executor::exec_detached) keeps variables, imports and functions from run to run; an
// exception leaves the state usable; a timeout interrupts the run and keeps the state, or —
// when the run never returns to the interpreter — kills it and says the state is lost; a run
// past the output cap ends, not the session; and other execs in the sandbox, even ones that
// time out, leave the interpreter alone.
#include <nlohmann/json.hpp>

#include "src/session/session.h"
#include "tests/contract/contract_fixture.h"

namespace corral {
namespace {

class InteractiveContract : public Contract {
 protected:
  std::unique_ptr<Session> open(const std::string& language = "python") {
    SessionOptions o;
    o.language = language;
    o.interactive = true;
    auto s = Session::open(*executor_, std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  ExecResult run(Session& s, const std::string& code, std::optional<uint64_t> timeout_ms = {}) {
    RunOptions o;
    o.timeout_ms = timeout_ms;
    auto r = s.run(code, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }
  // Whether `binary` runs here: on the host for native, in the image for the engines.
  bool has(const std::string& binary) {
    if (!container()) return access(binary.c_str(), X_OK) == 0;
    auto r = executor_->run_once(SandboxSpec{Policy{}}, ExecRequest{{"/bin/sh", "-c", "test -x " + binary}});
    return r.ok() && r->status() == ExecStatus::kOk;
  }
};

TEST_P(InteractiveContract, PythonStatePersistsAcrossRuns) {
  auto s = open();
  ASSERT_TRUE(s);
  auto a = run(*s,
               "import math\n"
               "x = 41\n"
               "def double(v):\n    return 2 * v\n"
               "class Box:\n    def __init__(self, v): self.v = v\n"
               "x + 1\n");
  EXPECT_EQ(a.status(), ExecStatus::kOk) << a.message << a.stderr_data;
  EXPECT_EQ(a.value, std::optional<std::string>("42"));
  auto b = run(*s, "print(double(x), math.pi > 3, Box(x).v)\n");
  EXPECT_EQ(b.status(), ExecStatus::kOk) << b.message << b.stderr_data;
  EXPECT_EQ(b.stdout_data, "82 True 41\n");
  EXPECT_FALSE(b.value.has_value());
  // Commands and files beside the interpreter leave its state alone.
  auto c = s->execute_command("echo from the shell");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->stdout_data, "from the shell\n");
  ASSERT_TRUE(s->put_files({{"data.txt", "from the host", 0644}}).ok());
  EXPECT_EQ(run(*s, "open('data.txt').read() + ' / ' + str(double(x))").value,
            std::optional<std::string>("'from the host / 82'"));
}

TEST_P(InteractiveContract, ExceptionLeavesTheStateUsable) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "total = 10");
  auto e = run(*s, "total += 5\nraise ValueError('bad input')\n");
  EXPECT_EQ(e.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(e.message, "ValueError: bad input");
  EXPECT_NE(e.stderr_data.find("Traceback (most recent call last)"), std::string::npos) << e.stderr_data;
  EXPECT_EQ(run(*s, "total").value, std::optional<std::string>("15"));
}

TEST_P(InteractiveContract, TimeoutInterruptsTheRunAndKeepsTheState) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "kept = 'yes'");
  auto t = run(*s, "import time\nprogress = 0\nwhile True:\n    progress += 1\n    time.sleep(0.01)\n", 600);
  EXPECT_EQ(t.status(), ExecStatus::kTimeout) << t.message;
  EXPECT_NE(t.message.find("state were kept"), std::string::npos) << t.message;
  EXPECT_NE(t.stderr_data.find("KeyboardInterrupt"), std::string::npos) << t.stderr_data;
  auto after = run(*s, "(kept, progress > 10)");
  EXPECT_EQ(after.status(), ExecStatus::kOk) << after.message << after.stderr_data;
  EXPECT_EQ(after.value, std::optional<std::string>("('yes', True)"));
  EXPECT_TRUE(after.message.empty()) << after.message;
}

TEST_P(InteractiveContract, RunThatNeverYieldsLosesTheStateAndSaysSo) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "kept = 'yes'");
  // A C loop never returns to the interpreter: the interrupt cannot land, so it is killed.
  auto t = run(*s, "sum(range(10**13))", 500);
  EXPECT_EQ(t.status(), ExecStatus::kTimeout);
  EXPECT_NE(t.message.find("interpreter was killed"), std::string::npos) << t.message;
  EXPECT_NE(t.message.find("state is lost"), std::string::npos) << t.message;
  auto next = run(*s, "'kept' in globals()");
  EXPECT_EQ(next.status(), ExecStatus::kOk) << next.message << next.stderr_data;
  EXPECT_EQ(next.value, std::optional<std::string>("False"));
  EXPECT_NE(next.message.find("fresh one"), std::string::npos) << next.message;
  EXPECT_EQ(run(*s, "1 + 1").value, std::optional<std::string>("2"));
}

TEST_P(InteractiveContract, InterpreterSurvivesOtherExecsTimingOut) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "import os\nkept = 7\ndriver = os.getpid()");
  RunOptions quick;
  quick.timeout_ms = 500;
  auto slow = s->execute_command("sleep 30", quick);
  ASSERT_TRUE(slow.ok()) << slow.status().to_string();
  EXPECT_EQ(slow->status(), ExecStatus::kTimeout);
  auto after = run(*s, "(kept, os.getpid() == driver)");
  EXPECT_EQ(after.status(), ExecStatus::kOk) << after.message << after.stderr_data;
  EXPECT_EQ(after.value, std::optional<std::string>("(7, True)"));
  EXPECT_TRUE(after.message.empty()) << after.message;
}

TEST_P(InteractiveContract, OutputLimitEndsTheRunNotTheSession) {
  auto s = open();
  ASSERT_TRUE(s);
  run(*s, "kept = 'yes'");
  auto flood = run(*s, "while True:\n    print('x' * 1000)\n");
  EXPECT_EQ(flood.status(), ExecStatus::kOutputLimit) << flood.message;
  EXPECT_TRUE(flood.stdout_truncated);
  auto after = run(*s, "kept");
  EXPECT_EQ(after.status(), ExecStatus::kOk) << after.message << after.stderr_data;
  EXPECT_EQ(after.value, std::optional<std::string>("'yes'"));
}

TEST_P(InteractiveContract, JavaScriptStatePersistsAcrossRuns) {
  if (!has("/usr/bin/node")) GTEST_SKIP() << GetParam() << ": no /usr/bin/node here";
  auto s = open("javascript");
  ASSERT_TRUE(s);
  auto a = run(*s, "const lib = require('path'); let n = 20; function twice(v) { return 2 * v; }\ntwice(n) + 2");
  EXPECT_EQ(a.status(), ExecStatus::kOk) << a.message << a.stderr_data;
  EXPECT_EQ(a.value, std::optional<std::string>("42"));
  auto e = run(*s, "n = 7; throw new TypeError('nope')");
  EXPECT_EQ(e.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(run(*s, "[n, twice(n), lib.basename('/a/b')]").value, std::optional<std::string>("[ 7, 14, 'b' ]"));
}

INSTANTIATE_TEST_SUITE_P(Backends, InteractiveContract, ::testing::Values("native", "docker", "podman"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace corral
