// The executor contract: the same cases on every backend (native, docker, podman), through
// the registry, as sessions, pools and servers use them. A backend that cannot run here skips
// with the reason (not root; engine not reachable: run `tools/engines start`); in CI all run.
// The container backends use CORRAL_TEST_IMAGE (default corral-test:latest, built by
// tools/engines: busybox + python3 + bash, no registry needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "backends/docker/docker_executor.h"
#include "backends/registry.h"
#include "src/lang/runner.h"

namespace corral {
namespace {

std::string test_image() {
  const char* v = getenv("CORRAL_TEST_IMAGE");
  return v && *v ? v : "corral-test:latest";
}

std::string read_host_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Contract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& backend = GetParam();
    if (geteuid() != 0) GTEST_SKIP() << backend << ": needs root (native writes id maps; engines' sockets are root's)";
    auto ex = make_executor({backend, backend == "native" ? "" : test_image(), ""});
    if (!ex.ok()) GTEST_SKIP() << backend << " not reachable: " << ex.status().to_string() << " (tools/engines start)";
    executor_ = std::move(ex).value();
    if (auto* d = engine()) {
      auto has = d->image_exists(test_image());
      if (!has.ok() || !*has) GTEST_SKIP() << backend << ": no image " << test_image() << " (tools/engines start)";
    }
  }

  docker::DockerExecutor* engine() { return dynamic_cast<docker::DockerExecutor*>(executor_.get()); }
  bool container() const { return GetParam() != "native"; }

  static Policy policy(const std::string& json = "{}") {
    auto p = Policy::from_json_text(json);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? *p : Policy{};
  }

  std::unique_ptr<Sandbox> make(const Policy& p = Policy{}) {
    auto sb = executor_->create(SandboxSpec{p});
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    return sb.ok() ? std::move(sb).value() : nullptr;
  }

  ExecResult exec(Sandbox& sb, std::vector<std::string> argv, std::string stdin_data = {},
                  std::optional<uint64_t> wall_ms = {}) {
    ExecRequest req;
    req.argv = std::move(argv);
    req.stdin_data = std::move(stdin_data);
    req.wall_ms = wall_ms;
    auto r = executor_->exec(sb, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  ExecResult run(std::vector<std::string> argv, const Policy& p = Policy{}, std::string stdin_data = {}) {
    ExecRequest req;
    req.argv = std::move(argv);
    req.stdin_data = std::move(stdin_data);
    auto r = executor_->run_once(SandboxSpec{p}, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  ExecResult python(const std::string& code, const Policy& p = Policy{}) {
    return run({"/usr/bin/python3", "-c", code}, p);
  }

  std::unique_ptr<Executor> executor_;
};

TEST_P(Contract, HelloWorldPerLanguage) {
  int ran = 0;
  for (const char* name : {"python", "bash"}) {
    const lang::LanguageHandler* h = lang::find_language(name);
    ASSERT_NE(h, nullptr) << name;
    if (!container() && access(h->binary(), X_OK) != 0) continue;  // the image has both
    lang::RunRequest req;
    req.language = name;
    req.code = std::string(name) == "python" ? "print('hello from python')" : "echo hello from bash";
    auto r = lang::run_code(*executor_, req);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().to_string();
    EXPECT_EQ(r->status(), ExecStatus::kOk) << name << ": " << r->message << r->stderr_data;
    EXPECT_EQ(r->stdout_data, std::string("hello from ") + name + "\n");
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

TEST_P(Contract, Stdin) {
  auto r = python("import sys; print(sys.stdin.read().upper(), end='')", Policy{});
  EXPECT_EQ(r.stdout_data, "");  // no stdin given: EOF at once
  ExecResult r2 = run({"/usr/bin/python3", "-c", "import sys; d=sys.stdin.read(); print(len(d), d[:5].upper())"},
                      Policy{}, std::string(300'000, 'a'));
  EXPECT_EQ(r2.status(), ExecStatus::kOk) << r2.stderr_data;
  EXPECT_EQ(r2.stdout_data, "300000 AAAAA\n");
}

TEST_P(Contract, ExitCodesAndStderr) {
  auto r = python("import sys; sys.stderr.write('oops\\n'); sys.exit(42)");
  EXPECT_EQ(r.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(r.exit_code, 42);
  EXPECT_EQ(r.stderr_data, "oops\n");
  EXPECT_EQ(r.stdout_data, "");
  auto ok = python("print('fine')");
  EXPECT_EQ(ok.status(), ExecStatus::kOk);
  EXPECT_EQ(ok.exit_code, 0);
}

TEST_P(Contract, TimeoutKillsAndSandboxSurvives) {
  auto sb = make();
  ASSERT_TRUE(sb);
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c", "import time; print('start', flush=True); time.sleep(30)"}, {},
                      1500);
  EXPECT_EQ(r.status(), ExecStatus::kTimeout);
  EXPECT_EQ(r.stdout_data, "start\n");
  EXPECT_LT(r.usage.wall_ms, 10'000);
  // Nothing of the timed-out run is left, and the sandbox still runs programs.
  ExecResult after = exec(*sb, {"/usr/bin/python3", "-c", "import os; m = 'time.sl' + 'eep(30)'; print(sum(1 for p in os.listdir('/proc') if p.isdigit() and m in open('/proc/'+p+'/cmdline').read()))"});
  EXPECT_EQ(after.status(), ExecStatus::kOk) << after.stderr_data;
  EXPECT_EQ(after.stdout_data, "0\n");
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, MemoryLimitIsOom) {
  auto sb = make(policy(R"({"limits": {"memory_bytes": 67108864}})"));
  ASSERT_TRUE(sb);
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c", "b = b'x' * (400 << 20); print(len(b))"});
  EXPECT_EQ(r.status(), ExecStatus::kOom) << exec_status_name(r.status()) << " " << r.message << r.stderr_data;
  // Native sandboxes end with their OOM (memory.oom.group kills the whole cgroup); a
  // container survives it: there a second OOM is still an OOM, and small programs still run.
  if (!container()) {
    (void)executor_->destroy(*sb);
    return;
  }
  ExecResult r2 = exec(*sb, {"/usr/bin/python3", "-c", "b = b'y' * (400 << 20)"});
  EXPECT_EQ(r2.status(), ExecStatus::kOom) << exec_status_name(r2.status());
  ExecResult ok = exec(*sb, {"/usr/bin/python3", "-c", "print(1)"});
  EXPECT_EQ(ok.status(), ExecStatus::kOk);
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, PidsLimit) {
  auto r = python(
      "import os, time\n"
      "ok = failed = 0\n"
      "for i in range(64):\n"
      "    try:\n"
      "        if os.fork() == 0:\n"
      "            time.sleep(3); os._exit(0)\n"
      "        ok += 1\n"
      "    except OSError:\n"
      "        failed += 1\n"
      "print(ok < 64, failed > 0)\n",
      policy(R"({"limits": {"pids": 16}})"));
  EXPECT_EQ(r.stdout_data, "True True\n") << r.stderr_data;
}

TEST_P(Contract, NetworkDenied) {
  auto r = python(
      "import socket\n"
      "s = socket.socket(); s.settimeout(3)\n"
      "try:\n"
      "    s.connect(('1.1.1.1', 53)); print('connected')\n"
      "except OSError as e:\n"
      "    print('denied')\n"
      "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\n");
  EXPECT_EQ(r.stdout_data, "denied\n['lo']\n") << r.stderr_data;
}

TEST_P(Contract, RunsUnprivileged) {
  auto r = python(
      "import os\n"
      "cap = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]\n"
      "nnp = [l.split()[1] for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0]\n"
      "sec = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0]\n"
      "print(os.getuid(), cap, nnp, sec)\n");
  EXPECT_EQ(r.stdout_data, "1000 0000000000000000 1 2\n") << r.stderr_data;
}

TEST_P(Contract, FilesInAndOut) {
  auto sb = make();
  ASSERT_TRUE(sb);
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>(i);
  ASSERT_TRUE(executor_->put_files(*sb, {{"in.txt", "hello", 0644}, {"sub/dir/data.bin", binary, 0600}}).ok());
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c",
                            "import os\n"
                            "d = open('sub/dir/data.bin','rb').read()\n"
                            "os.makedirs('out', exist_ok=True)\n"
                            "open('out/result.txt','w').write(open('in.txt').read().upper() + str(len(d)))\n"
                            "print(oct(os.stat('sub/dir/data.bin').st_mode & 0o777), os.stat('in.txt').st_uid)\n"});
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "0o600 1000\n");
  auto files = executor_->get_files(*sb, {"out/result.txt", "/sandbox/sub/dir/data.bin"}, 1 << 20);
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].data, "HELLO256");
  EXPECT_EQ((*files)[1].data, binary);
  // Over the per-file cap: refused, naming the file.
  auto big = executor_->get_files(*sb, {"sub/dir/data.bin"}, 100);
  EXPECT_FALSE(big.ok());
  EXPECT_EQ(big.status().field(), "sub/dir/data.bin");
  auto missing = executor_->get_files(*sb, {"nope.txt"}, 1 << 20);
  EXPECT_FALSE(missing.ok());
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, TarSlipRefused) {
  auto sb = make();
  ASSERT_TRUE(sb);
  const std::string host_passwd = read_host_file("/etc/passwd");
  for (const char* bad : {"../escape.txt", "a/../../escape.txt", "/sandbox/../etc/passwd", "", "./x"}) {
    Status s = executor_->put_files(*sb, {{bad, "pwned\n", 0644}});
    EXPECT_FALSE(s.ok()) << "put accepted '" << bad << "'";
    auto g = executor_->get_files(*sb, {bad}, 1 << 20);
    EXPECT_FALSE(g.ok()) << "get accepted '" << bad << "'";
  }
  EXPECT_EQ(read_host_file("/etc/passwd"), host_passwd);
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c", "print('pwned' in open('/etc/passwd').read())"});
  EXPECT_EQ(r.stdout_data, "False\n");
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, SymlinkAttacks) {
  auto sb = make();
  ASSERT_TRUE(sb);
  const std::string host_passwd = read_host_file("/etc/passwd");
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c",
                            "import os\n"
                            "os.symlink('/etc/passwd', 'link')\n"
                            "os.symlink('/etc', 'dirlink')\n"});
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  // Reading through a symlink is refused (never followed to a file outside the workdir).
  auto g = executor_->get_files(*sb, {"link"}, 1 << 20);
  EXPECT_FALSE(g.ok());
  // Writing over a symlink, or beneath a symlinked directory, never writes its target.
  (void)executor_->put_files(*sb, {{"link", "pwned\n", 0644}});
  (void)executor_->put_files(*sb, {{"dirlink/passwd", "pwned\n", 0644}});
  EXPECT_EQ(read_host_file("/etc/passwd"), host_passwd);
  ExecResult check = exec(*sb, {"/usr/bin/python3", "-c", "print('pwned' in open('/etc/passwd').read())"});
  EXPECT_EQ(check.stdout_data, "False\n") << check.stderr_data;
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, OutputCap) {
  auto r = python("import sys\nfor i in range(100000): sys.stdout.write('x' * 100)\n",
                  policy(R"({"limits": {"output_bytes": 10000}})"));
  EXPECT_EQ(r.status(), ExecStatus::kOutputLimit) << exec_status_name(r.status());
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stdout_data.size(), 10000u);
  EXPECT_FALSE(r.stderr_truncated);
}

TEST_P(Contract, NoContainersLeft) {
  auto* d = engine();
  if (!d) GTEST_SKIP() << "native: leaks are counted by integration/leak_test";
  auto before = d->list_sandbox_containers();
  auto vols_before = d->list_sandbox_volumes();
  ASSERT_TRUE(before.ok() && vols_before.ok());
  for (int i = 0; i < 5; ++i) {
    auto r = python("print(1)");
    EXPECT_EQ(r.status(), ExecStatus::kOk);
  }
  auto sb = make();  // a timeout, then destroy
  ASSERT_TRUE(sb);
  exec(*sb, {"sleep", "10"}, {}, 300);
  EXPECT_TRUE(executor_->destroy(*sb).ok());
  auto after = d->list_sandbox_containers();
  auto vols_after = d->list_sandbox_volumes();
  ASSERT_TRUE(after.ok() && vols_after.ok());
  EXPECT_EQ(std::set<std::string>(after->begin(), after->end()),
            std::set<std::string>(before->begin(), before->end()));
  EXPECT_EQ(std::set<std::string>(vols_after->begin(), vols_after->end()),
            std::set<std::string>(vols_before->begin(), vols_before->end()));
}

TEST_P(Contract, UnsupportedPolicyRefused) {
  if (!container()) GTEST_SKIP() << "native honours limits.cpu_ms";
  auto sb = executor_->create(SandboxSpec{policy(R"({"limits": {"cpu_ms": 1000}})")});
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().field(), "limits.cpu_ms");
  auto allow = executor_->create(SandboxSpec{policy(R"({"network": {"mode": "allowlist", "allow": ["example.com:443"]}})")});
  ASSERT_FALSE(allow.ok());
  EXPECT_EQ(allow.status().field(), "network.allow");
}

INSTANTIATE_TEST_SUITE_P(Backends, Contract, ::testing::Values("native", "docker", "podman"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace corral
