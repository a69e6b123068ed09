// The supervisor's side of an exec: exit codes, signals, timeouts, output caps, stdin,
// streaming, seccomp reporting, sessions of several execs, files in and out.
#include <atomic>
#include <csignal>
#include <fstream>
#include <mutex>
#include <thread>

#include "seccomp/compiler.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

using Supervisor = SandboxTest;

TEST_F(Supervisor, ExitCodesAndSignals) {
  ExecResult ok = run({"/bin/true"});
  EXPECT_EQ(ok.status(), ExecStatus::kOk);
  EXPECT_EQ(ok.exit_code, 0);
  ExecResult code = sh("exit 42");
  EXPECT_EQ(code.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(code.exit_code, 42);
  ExecResult sig = sh("kill -SEGV $$");
  EXPECT_EQ(sig.status(), ExecStatus::kSignaled);
  EXPECT_EQ(sig.signal, SIGSEGV);
  EXPECT_EQ(sig.exit_code, -1);
}

// Sandboxes made on several threads at once while other threads come and go. corral-init is
// a clone of a multi-threaded supervisor: it inherits glibc's list of threads but not the
// threads, so a glibc set*id call there (which signals every listed thread and waits for
// each) could wait forever for a thread caught mid-creation. Every create must finish.
TEST_F(Supervisor, CreatesOnManyThreadsWhileThreadsComeAndGo) {
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) std::thread([] {}).join();
  });
  std::atomic<int> ok{0};
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> makers;
  for (int t = 0; t < 3; ++t) {
    makers.emplace_back([&] {
      for (int i = 0; i < 15; ++i) {
        ExecRequest req;
        req.argv = {"/bin/true"};
        auto r = executor_.run_once(SandboxSpec{}, req);
        if (r.ok() && r->status() == ExecStatus::kOk) {
          ++ok;
        } else {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) first_error = r.ok() ? r->message : r.status().to_string();
        }
      }
    });
  }
  for (auto& m : makers) m.join();
  stop = true;
  churn.join();
  EXPECT_EQ(ok.load(), 45) << first_error;
}

TEST_F(Supervisor, WallClockTimeoutKillsEverything) {
  Policy p = policy(R"({"limits": {"wall_ms": 300}})");
  ExecResult r = sh("sleep 30 & sleep 30 & while :; do :; done", p);
  EXPECT_EQ(r.status(), ExecStatus::kTimeout);
  EXPECT_GE(r.usage.wall_ms, 290);
  EXPECT_LT(r.usage.wall_ms, 5000);
  EXPECT_NE(r.message.find("300 ms"), std::string::npos) << r.message;
}

TEST_F(Supervisor, OutputCapTruncatesAndStops) {
  Policy p = policy(R"({"limits": {"output_bytes": 1000, "wall_ms": 20000}})");
  ExecResult r = sh("yes 0123456789", p);
  EXPECT_EQ(r.status(), ExecStatus::kOutputLimit);
  EXPECT_EQ(r.stdout_data.size(), 1000u);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_FALSE(r.stderr_truncated);
  EXPECT_LT(r.usage.wall_ms, 10000);  // stopped, not left to the wall clock
}

TEST_F(Supervisor, LargeOutputUnderTheCapIsComplete) {
  Policy p = policy(R"({"limits": {"output_bytes": 10000000}})");
  ExecResult r = py("import sys; sys.stdout.write('x' * 5000000); sys.stderr.write('y' * 300000)", p);
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.message;
  EXPECT_EQ(r.stdout_data.size(), 5000000u);
  EXPECT_EQ(r.stderr_data.size(), 300000u);
}

TEST_F(Supervisor, StdinIsDelivered) {
  std::string big(3 << 20, 'z');  // larger than a pipe buffer
  ExecResult r = run({"/usr/bin/wc", "-c"}, Policy{}, big);
  ASSERT_EQ(r.status(), ExecStatus::kOk);
  EXPECT_EQ(r.stdout_data, std::to_string(big.size()) + "\n");
}

TEST_F(Supervisor, ProgramIgnoringStdinDoesNotHang) {
  ExecResult r = run({"/bin/true"}, Policy{}, std::string(1 << 20, 'q'));
  EXPECT_EQ(r.status(), ExecStatus::kOk);
}

TEST_F(Supervisor, StreamingCallbacksSeeOutputInOrder) {
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", "for i in 1 2 3; do echo $i; sleep 0.05; done"};
  std::string seen;
  int calls = 0;
  req.on_stdout = [&](std::string_view s) {
    seen += s;
    ++calls;
  };
  auto r = executor_.run_once(SandboxSpec{}, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(seen, "1\n2\n3\n");
  EXPECT_GE(calls, 2);  // arrived in pieces, as produced
  EXPECT_EQ(r->stdout_data, seen);
}

TEST_F(Supervisor, SetupErrorNamesTheProgram) {
  ExecResult r = run({"/no/such/binary"});
  EXPECT_EQ(r.status(), ExecStatus::kSetupError);
  EXPECT_NE(r.message.find("/no/such/binary"), std::string::npos);
  ExecResult cwd = [&] {
    ExecRequest req;
    req.argv = {"/bin/true"};
    req.cwd = "/does/not/exist";
    return *executor_.run_once(SandboxSpec{}, req);
  }();
  EXPECT_EQ(cwd.status(), ExecStatus::kSetupError);
  EXPECT_NE(cwd.message.find("chdir"), std::string::npos);
}

TEST_F(Supervisor, SeccompKillIsReportedWithTheSyscallName) {
  // A profile that kills on getppid, on top of allowing what sh needs.
  char dir[] = "/tmp/corral-seccomp-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/kill-getppid.json";
  std::ifstream def(seccomp::profile_dir() + "/default.json");
  nlohmann::json prof = nlohmann::json::parse(def);
  prof["name"] = "kill-getppid";
  // Drop getppid from every allow rule, then kill on it.
  for (auto& rule : prof["rules"]) {
    auto& names = rule["names"];
    names.erase(std::remove(names.begin(), names.end(), "getppid"), names.end());
  }
  prof["rules"].push_back({{"names", {"getppid"}}, {"action", "kill"}});
  std::ofstream(path) << prof.dump();
  Policy p = policy(R"({"seccomp": ")" + path + R"("})");
  ExecResult r = py("import os; print('before', flush=True); os.getppid(); print('after')", p);
  std::remove(path.c_str());
  rmdir(dir);
  EXPECT_EQ(r.status(), ExecStatus::kSeccompViolation) << r.message << r.stderr_data;
  EXPECT_NE(r.message.find("getppid"), std::string::npos) << r.message;
  EXPECT_EQ(r.stdout_data, "before\n");
}

TEST_F(Supervisor, SandboxServesSeveralExecsAndKeepsFiles) {
  auto sb = executor_.create(SandboxSpec{});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest write;
  write.argv = {"/bin/sh", "-c", "echo state > /sandbox/keep; sleep 60 & echo started"};
  auto first = executor_.exec(**sb, write);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->stdout_data, "started\n");
  ExecRequest read;
  read.argv = {"/bin/sh", "-c", "cat /sandbox/keep; ls /proc | grep -c '^[0-9]'"};
  auto second = executor_.exec(**sb, read);
  ASSERT_TRUE(second.ok());
  // The file survives; the background sleep of the first exec does not (init + sh + ls + grep).
  EXPECT_EQ(second->stdout_data.substr(0, 6), "state\n");
  EXPECT_LE(std::stoi(second->stdout_data.substr(6)), 4) << second->stdout_data;
  EXPECT_TRUE(executor_.destroy(**sb).ok());
  auto after = executor_.exec(**sb, read);
  EXPECT_FALSE(after.ok());
}

TEST_F(Supervisor, TimeoutInOneExecLeavesTheSandboxUsable) {
  auto sb = executor_.create(SandboxSpec{});
  ASSERT_TRUE(sb.ok());
  ExecRequest spin;
  spin.argv = {"/bin/sh", "-c", "while :; do :; done"};
  spin.wall_ms = 200;
  auto r = executor_.exec(**sb, spin);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status(), ExecStatus::kTimeout);
  ExecRequest echo;
  echo.argv = {"/bin/echo", "alive"};
  auto again = executor_.exec(**sb, echo);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stdout_data, "alive\n");
  executor_.destroy(**sb);
}

TEST_F(Supervisor, FilesInAndOut) {
  auto sb = executor_.create(SandboxSpec{});
  ASSERT_TRUE(sb.ok());
  Status put = executor_.put_files(**sb, {{"data/in.txt", "payload\n", 0644}, {"/tmp/abs.txt", "x\n", 0600}});
  ASSERT_TRUE(put.ok()) << put.to_string();
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", "cat data/in.txt; stat -c %U data/in.txt; cat /tmp/abs.txt; echo out > result.txt"};
  auto r = executor_.exec(**sb, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data, "payload\nsandbox\nx\n");
  auto files = executor_.get_files(**sb, {"result.txt"}, 1024);
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_EQ((*files)[0].data, "out\n");
  // Refusals: traversal, symlinks out, special files, oversize.
  EXPECT_FALSE(executor_.put_files(**sb, {{"../../etc/evil", "x", 0644}}).ok());
  req.argv = {"/bin/sh", "-c", "ln -s /etc/shadow link; mkfifo fifo; head -c 5000 /dev/zero > big"};
  ASSERT_TRUE(executor_.exec(**sb, req).ok());
  auto link = executor_.get_files(**sb, {"link"}, 1 << 20);
  EXPECT_FALSE(link.ok());
  auto fifo = executor_.get_files(**sb, {"fifo"}, 1 << 20);
  EXPECT_FALSE(fifo.ok());
  auto big = executor_.get_files(**sb, {"big"}, 4096);
  EXPECT_FALSE(big.ok());
  EXPECT_FALSE(executor_.put_files(**sb, {{"link", "overwrite", 0644}}).ok());
  EXPECT_EQ(access("/etc/evil", F_OK), -1);
  executor_.destroy(**sb);
}

}  // namespace
}  // namespace corral::testing
