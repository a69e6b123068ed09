// The executor contract: the same cases on every backend (native, docker, podman), through
// the registry, as sessions, pools and servers use them (fixture: contract_fixture.h); in CI
// all run.
#include <set>

#include "src/lang/runner.h"
#include "tests/contract/contract_fixture.h"

namespace corral {
namespace {

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

TEST_P(Contract, StepWritesFilesRunsAndReportsTheAfterCommand) {
  auto sb = make();
  ASSERT_TRUE(sb);
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>(i);
  StepRequest step;
  step.files = {{"code/main.py",
                 "import os, sys\n"
                 "print(open('data.bin', 'rb').read()[:3], oct(os.stat('code/run.sh').st_mode & 0o777), input())\n"
                 "sys.stderr.write('err\\n')\n"
                 "sys.exit(3)\n",
                 0644},
                {"data.bin", binary, 0644},  // binary: the container backends send it by the archive API
                {"code/run.sh", "#!/bin/sh\necho run\n", 0755}};
  step.exec.argv = {"/usr/bin/python3", "code/main.py"};
  step.exec.stdin_data = "typed\n";
  std::string streamed;
  step.exec.on_stderr = [&](std::string_view d) { streamed.append(d); };
  step.after = "ls code; echo done";
  auto r = executor_->exec_step(*sb, step);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->result.status(), ExecStatus::kNonzeroExit) << r->result.message << r->result.stderr_data;
  EXPECT_EQ(r->result.exit_code, 3);
  EXPECT_EQ(r->result.stdout_data, "b'\\x00\\x01\\x02' 0o755 typed\n");
  EXPECT_EQ(r->result.stderr_data, "err\n");
  EXPECT_EQ(streamed, "err\n") << "nothing of the after command reaches the program's stream";
  // The container backends run the after command in the same exec; native leaves it to the
  // caller (an exec there costs a millisecond).
  if (container()) {
    ASSERT_TRUE(r->after_stdout.has_value());
    EXPECT_EQ(*r->after_stdout, "main.py\nrun.sh\ndone\n");
  } else {
    EXPECT_FALSE(r->after_stdout.has_value());
  }
  // Text files alone travel with the exec on the container backends: same result.
  StepRequest small;
  small.files = {{"/sandbox/again.txt", "second ✓", 0600}};
  small.exec.argv = {"/bin/sh", "-c", "cat again.txt"};
  auto s2 = executor_->exec_step(*sb, small);
  ASSERT_TRUE(s2.ok()) << s2.status().to_string();
  EXPECT_EQ(s2->result.status(), ExecStatus::kOk) << s2->result.stderr_data;
  EXPECT_EQ(s2->result.stdout_data, "second ✓");
  auto got = executor_->get_files(*sb, {"again.txt", "code/main.py"}, 1 << 20);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ((*got)[0].data, "second ✓");
  EXPECT_EQ((*got)[0].mode, 0600u);
  EXPECT_EQ((*got)[1].data, step.files[0].data);
  // A path put_files refuses is refused the same way, before anything runs; a program that
  // does not exist is a setup error.
  StepRequest bad;
  bad.files = {{"../escape.txt", "x", 0644}};
  bad.exec.argv = {"/bin/sh", "-c", "echo ran"};
  EXPECT_FALSE(executor_->exec_step(*sb, bad).ok());
  StepRequest missing;
  missing.files = {{"m.txt", "x", 0644}};
  missing.exec.argv = {"/no/such/program"};
  auto m = executor_->exec_step(*sb, missing);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->result.status(), ExecStatus::kSetupError) << exec_status_name(m->result.status());
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, LanguageRunReportsUsageAndSignals) {
  lang::RunRequest req;
  req.language = "python";
  req.code =
      "import time\n"
      "block = bytearray(96 << 20)\n"
      "for i in range(0, len(block), 4096): block[i] = 1\n"
      "end = time.process_time() + 0.3\n"
      "while time.process_time() < end: pass\n"
      "print(len(block) >> 20)\n";
  auto r = lang::run_code(*executor_, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kOk) << r->message << r->stderr_data;
  EXPECT_EQ(r->stdout_data, "96\n");
  EXPECT_GE(r->usage.cpu_user_ms + r->usage.cpu_sys_ms, 250) << "CPU time";
  EXPECT_LT(r->usage.cpu_user_ms + r->usage.cpu_sys_ms, 10'000);
  EXPECT_GE(r->usage.peak_memory_bytes, 96ull << 20) << "peak memory";
  EXPECT_GE(r->usage.wall_ms, 300);
  // A program killed by a signal: that status, and nothing but its own output on stderr.
  req.code = "import os, sys\nsys.stderr.write('going\\n'); sys.stderr.flush()\nos.kill(os.getpid(), 9)\n";
  auto k = lang::run_code(*executor_, req);
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_EQ(k->status(), ExecStatus::kSignaled) << exec_status_name(k->status()) << " " << k->message;
  EXPECT_EQ(k->signal, 9);
  EXPECT_EQ(k->stderr_data, "going\n");
}

TEST_P(Contract, StepNeverWritesThroughSymlinks) {
  auto sb = make();
  ASSERT_TRUE(sb);
  const std::string host_passwd = read_host_file("/etc/passwd");
  ExecResult planted = exec(*sb, {"/usr/bin/python3", "-c",
                                  "import os\n"
                                  "os.symlink('/etc/passwd', 'link')\n"
                                  "os.symlink('/etc', 'dirlink')\n"
                                  "os.symlink('/tmp/planted', 'dangling')\n"});
  ASSERT_EQ(planted.status(), ExecStatus::kOk) << planted.stderr_data;
  for (const char* path : {"link", "dirlink/passwd", "dangling"}) {
    StepRequest step;
    step.files = {{path, "pwned\n", 0644}};
    step.exec.argv = {"/bin/true"};
    // Refused (native) or the link replaced by a file (containers): never written through.
    auto r = executor_->exec_step(*sb, step);
    if (r.ok()) {
      EXPECT_EQ(r->result.status(), ExecStatus::kOk) << path << ": " << r->result.message;
    }
  }
  EXPECT_EQ(read_host_file("/etc/passwd"), host_passwd);
  ExecResult check = exec(*sb, {"/usr/bin/python3", "-c",
                                "import os\n"
                                "print('pwned' in open('/etc/passwd').read(), os.path.exists('/tmp/planted'))\n"});
  EXPECT_EQ(check.stdout_data, "False False\n") << check.stderr_data;
  EXPECT_TRUE(executor_->destroy(*sb).ok());
}

TEST_P(Contract, DetachedProgramOutlivesOtherExecsAndTheirTimeouts) {
  auto sb = make();
  ASSERT_TRUE(sb);
  ExecRequest start;
  start.argv = {"/bin/sh", "-c", "echo started; echo $$ > /tmp/daemon.pid; exec >/dev/null 2>&1; exec sleep 1000"};
  start.wall_ms = 10'000;
  auto d = executor_->exec_detached(*sb, start);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->status(), ExecStatus::kOk) << d->message << d->stderr_data;
  EXPECT_EQ(d->exit_code, -1);
  EXPECT_EQ(d->stdout_data, "started\n");
  EXPECT_EQ(d->stderr_data, "");
  EXPECT_NE(d->message.find("running detached"), std::string::npos) << d->message;
  // An exec that times out is killed with everything it started; the detached program is not.
  ExecResult slow = exec(*sb, {"/bin/sh", "-c", "sleep 1000 & sleep 1000"}, {}, 500);
  EXPECT_EQ(slow.status(), ExecStatus::kTimeout);
  ExecResult check = exec(*sb, {"/usr/bin/python3", "-c",
                                "import os\n"
                                "os.kill(int(open('/tmp/daemon.pid').read()), 0)\n"
                                "def cmd(p):\n"
                                "    try:\n"
                                "        return open('/proc/%s/cmdline' % p, 'rb').read()\n"
                                "    except OSError:\n"
                                "        return b''\n"
                                "print('daemon alive,', [cmd(p) for p in os.listdir('/proc') if p.isdigit()]"
                                ".count(b'sleep\\x001000\\x00'), 'sleeping')\n"});
  EXPECT_EQ(check.stdout_data, "daemon alive, 1 sleeping\n") << check.stderr_data;
  // One detached program per sandbox while it runs; once it has exited, another may start.
  auto second = executor_->exec_detached(*sb, start);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(second->status(), ExecStatus::kSetupError);
  EXPECT_NE(second->message.find("already running"), std::string::npos) << second->message;
  // (A zombie still answers kill -0: the loop ends once init has reaped it.)
  auto stop = [&] {
    ExecResult r = exec(*sb, {"/bin/sh", "-c",
                              "p=$(cat /tmp/daemon.pid); kill $p; while kill -0 $p 2>/dev/null; do sleep 0.01; done"},
                        {}, 5000);
    EXPECT_EQ(r.status(), ExecStatus::kOk) << r.message << r.stderr_data;
  };
  stop();
  auto third = executor_->exec_detached(*sb, start);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->status(), ExecStatus::kOk) << third->message << third->stderr_data;
  stop();
  // A program that exits instead of detaching is an ordinary result.
  ExecRequest fails;
  fails.argv = {"/bin/sh", "-c", "echo no >&2; exit 4"};
  auto f = executor_->exec_detached(*sb, fails);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->status(), ExecStatus::kNonzeroExit) << f->message;
  EXPECT_EQ(f->exit_code, 4);
  EXPECT_EQ(f->stderr_data, "no\n");
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
