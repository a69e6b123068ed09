// Whole-sandbox limits and accounting through the cgroup driver (v1 on hybrid hosts, v2 in
// tools/vm-test), and cleanup after a supervisor is killed.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <climits>
#include <fstream>
#include <thread>

#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

class Limits : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (IsSkipped()) return;
    auto d = executor_.cgroups();
    if (!d.ok()) GTEST_SKIP() << "no usable cgroup controllers here: " << d.status().to_string();
    driver_ = *d;
  }

  // Sandbox cgroups (named after sandbox ids, "n...") currently in the corral subtree.
  std::vector<std::string> sandbox_cgroups() const {
    std::vector<std::string> out;
    for (const std::string& dir : driver_->subtree_dirs()) {
      DIR* d = opendir(dir.c_str());
      if (!d) continue;
      while (dirent* e = readdir(d)) {
        if (e->d_type == DT_DIR && e->d_name[0] == 'n') out.push_back(dir + "/" + e->d_name);
      }
      closedir(d);
    }
    return out;
  }

  static std::string corral_binary() {
    char self[PATH_MAX] = {};
    readlink("/proc/self/exe", self, sizeof self - 1);
    std::string path(self);
    return path.substr(0, path.rfind("/tests/")) + "/src/cli/corral";
  }

  runtime::CgroupDriver* driver_ = nullptr;
};

TEST_F(Limits, MemoryBombIsOomAndPeakIsNearTheLimit) {
  const uint64_t limit = 64ull << 20;
  ExecResult r = py("chunks = []\nwhile True: chunks.append(bytearray(8 << 20))",
                    policy(R"({"limits": {"memory_bytes": 67108864, "wall_ms": 20000}})"));
  EXPECT_EQ(r.status(), ExecStatus::kOom) << r.message << r.stderr_data;
  EXPECT_NE(r.message.find("67108864"), std::string::npos) << r.message;
  EXPECT_GE(r.usage.peak_memory_bytes, limit * 8 / 10);
  EXPECT_LE(r.usage.peak_memory_bytes, limit + (4ull << 20));
  // The host and the supervisor are fine: the next sandbox runs normally.
  EXPECT_EQ(run({"/bin/true"}).status(), ExecStatus::kOk);
}

TEST_F(Limits, OomEndsTheWholeSandbox) {
  auto sb = executor_.create(SandboxSpec{policy(R"({"limits": {"memory_bytes": 67108864, "wall_ms": 20000}})")});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest bomb;
  bomb.argv = {"/bin/sh", "-c", "sleep 60 & /usr/bin/python3 -c 'b = [bytearray(8 << 20) for _ in range(100)]'"};
  auto r = executor_.exec(**sb, bomb);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kOom) << r->message;
  EXPECT_NE(r->message.find("was ended"), std::string::npos) << r->message;
  ExecRequest again;
  again.argv = {"/bin/true"};
  auto after = executor_.exec(**sb, again);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(executor_.destroy(**sb).ok());
}

TEST_F(Limits, ForkBombIsCappedAndReported) {
  ExecResult r = py(
      "import os, time\n"
      "n = 0\n"
      "try:\n"
      "    while True:\n"
      "        if os.fork() == 0:\n"
      "            time.sleep(60); os._exit(0)\n"
      "        n += 1\n"
      "except OSError as e:\n"
      "    print('refused', e.errno, n)\n",
      policy(R"({"limits": {"pids": 32, "wall_ms": 20000}})"));
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.message << r.stderr_data;
  int err = 0, forks = 0;
  ASSERT_EQ(sscanf(r.stdout_data.c_str(), "refused %d %d", &err, &forks), 2) << r.stdout_data;
  EXPECT_EQ(err, EAGAIN);
  EXPECT_LT(forks, 32);
  EXPECT_GT(forks, 20);
  EXPECT_NE(r.message.find("pids limit of 32"), std::string::npos) << r.message;
}

TEST_F(Limits, HalfACoreIsHalfACore) {
  ExecResult r = sh("while :; do :; done", policy(R"({"limits": {"cpu": 0.5, "wall_ms": 2000}})"));
  EXPECT_EQ(r.status(), ExecStatus::kTimeout);
  double cpu = r.usage.cpu_user_ms + r.usage.cpu_sys_ms;
  EXPECT_GT(cpu, 0.35 * r.usage.wall_ms) << cpu << " ms of CPU in " << r.usage.wall_ms << " ms";
  EXPECT_LT(cpu, 0.65 * r.usage.wall_ms) << cpu << " ms of CPU in " << r.usage.wall_ms << " ms";
}

TEST_F(Limits, CpuTimeBudgetIsEnforced) {
  ExecResult r = sh("while :; do :; done", policy(R"({"limits": {"cpu_ms": 300, "wall_ms": 20000}})"));
  EXPECT_EQ(r.status(), ExecStatus::kTimeout);
  EXPECT_NE(r.message.find("CPU time budget of 300 ms"), std::string::npos) << r.message;
  double cpu = r.usage.cpu_user_ms + r.usage.cpu_sys_ms;
  EXPECT_GE(cpu, 300);
  EXPECT_LT(cpu, 1000);
  EXPECT_LT(r.usage.wall_ms, 5000);
}

TEST_F(Limits, CpuBudgetCountsEveryProcessOfTheExec) {
  // Four spinning children: each alone stays under the budget, together they do not.
  ExecResult r = sh("for i in 1 2 3 4; do (while :; do :; done) & done; wait",
                    policy(R"({"limits": {"cpu_ms": 400, "wall_ms": 20000}})"));
  EXPECT_EQ(r.status(), ExecStatus::kTimeout);
  EXPECT_NE(r.message.find("CPU time budget"), std::string::npos) << r.message;
}

TEST_F(Limits, UsageIsMeasured) {
  ExecResult r = py("x = bytearray(100 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\n"
                    "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_GE(r.usage.peak_memory_bytes, 100ull << 20);
  EXPECT_LT(r.usage.peak_memory_bytes, 300ull << 20);
  EXPECT_GE(r.usage.cpu_user_ms + r.usage.cpu_sys_ms, 200);
}

TEST_F(Limits, AccountingIsPerExec) {
  auto sb = executor_.create(SandboxSpec{});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest heavy;
  heavy.argv = {"/usr/bin/python3", "-c",
                "x = bytearray(120 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\n"
                "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"};
  ExecRequest light;
  light.argv = {"/bin/true"};
  auto a = executor_.exec(**sb, heavy);
  auto b = executor_.exec(**sb, light);
  ASSERT_TRUE(a.ok() && b.ok());
  const double cpu_a = a->usage.cpu_user_ms + a->usage.cpu_sys_ms;
  const double cpu_b = b->usage.cpu_user_ms + b->usage.cpu_sys_ms;
  EXPECT_GE(cpu_a, 300);
  // B's usage does not include A's 300 ms busy loop (relative: under software emulation in
  // tools/vm-test even /bin/true costs ~200 ms of CPU).
  EXPECT_LT(cpu_b, cpu_a - 250) << "A " << cpu_a << " ms, B " << cpu_b << " ms";
  EXPECT_GE(a->usage.peak_memory_bytes, 120ull << 20);
  // A peak that can be reset per exec: every v1 kernel, v2 from 6.12.
  struct utsname u;
  uname(&u);
  int major = 0, minor = 0;
  sscanf(u.release, "%d.%d", &major, &minor);
  if (std::string(driver_->name()) == "v1" || major > 6 || (major == 6 && minor >= 12)) {
    EXPECT_LT(b->usage.peak_memory_bytes, 32ull << 20);
  }
  executor_.destroy(**sb);
}

TEST_F(Limits, ManyRunsWithLimitsLeaveNoCgroups) {
  Policy p = policy(R"({"limits": {"memory_bytes": 134217728, "pids": 16, "cpu": 1.5, "wall_ms": 100}})");
  for (int i = 0; i < 200; ++i) {
    ExecResult r = i % 4 == 0 ? sh("sleep 1 & sleep 1", p) : run({"/bin/true"}, p);
    ASSERT_NE(r.status(), ExecStatus::kInternalError) << r.message;
  }
  EXPECT_EQ(sandbox_cgroups(), std::vector<std::string>{});
}

TEST_F(Limits, KilledSupervisorIsCleanedUpByDoctor) {
  const std::string corral = corral_binary();
  ASSERT_EQ(access(corral.c_str(), X_OK), 0) << corral;
  auto before = sandbox_cgroups();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0), dup2(null, 1), dup2(null, 2);
    execl(corral.c_str(), "corral", "exec", "--", "/bin/sleep", "60", nullptr);
    _exit(127);
  }
  // Wait for its sandbox cgroup to appear, then kill the supervisor outright.
  std::vector<std::string> during;
  for (int i = 0; i < 500 && during.size() <= before.size(); ++i) {
    usleep(10 * 1000);
    during = sandbox_cgroups();
  }
  ASSERT_GT(during.size(), before.size()) << "the sandbox never appeared";
  usleep(100 * 1000);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // corral-init dies with its supervisor (PDEATHSIG), and the pid namespace with it.
  bool empty = false;
  for (int i = 0; i < 200 && !empty; ++i) {
    usleep(10 * 1000);
    empty = true;
    for (const auto& dir : during) {
      std::ifstream procs(dir + "/cgroup.procs");
      std::string pid;
      if (procs >> pid) empty = false;
    }
  }
  EXPECT_TRUE(empty) << "processes survived their supervisor";
  EXPECT_GT(sandbox_cgroups().size(), before.size()) << "expected the stale cgroup to remain until cleanup";
  FILE* doctor = popen((corral + " doctor --cleanup").c_str(), "r");
  char line[256] = {};
  ASSERT_NE(fgets(line, sizeof line, doctor), nullptr);
  EXPECT_EQ(pclose(doctor), 0);
  EXPECT_NE(std::string(line).find("removed"), std::string::npos) << line;
  EXPECT_EQ(sandbox_cgroups(), before);
}

}  // namespace
}  // namespace corral::testing
