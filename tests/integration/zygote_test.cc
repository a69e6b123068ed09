// The python zygote: sandboxes forked from a template that has numpy, pandas and matplotlib
// imported. Each test checks something a zygote could get wrong that a cold sandbox cannot:
// the imports are really preloaded, the isolation is the cold path's, nothing of the
// template or of a previous run is visible, and nothing outlives a run.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "sandbox_fixture.h"
#include "src/session/session.h"

namespace corral::testing {
namespace {

using runtime::NativeExecutor;

std::string proc_field(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      auto v = line.substr(key.size() + 1);
      auto start = v.find_first_not_of(" \t");
      return start == std::string::npos ? "" : v.substr(start);
    }
  }
  return "";
}

int count_dir(const std::string& path) {
  DIR* d = opendir(path.c_str());
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

class Zygote : public SandboxTest {
 protected:
  // One template for the suite: it takes seconds to import pandas and matplotlib.
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    shared_ = new NativeExecutor();
    start_status_ = new Status(shared_->start_zygote(runtime::ZygoteOptions{}));
  }
  static void TearDownTestSuite() {
    delete shared_;
    delete start_status_;
    shared_ = nullptr;
  }
  void SetUp() override {
    SandboxTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(start_status_->ok()) << start_status_->to_string();
  }

  static Policy python_policy(const std::string& extra = "") {
    auto p = Policy::from_json_text("{\"seccomp\": \"python\"" + extra + "}");
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? *p : Policy{};
  }

  // One zygote sandbox, one exec; `forked` says whether the zygote made it.
  ExecResult zrun(const std::vector<std::string>& argv, const Policy& p, bool* forked = nullptr,
                  const std::string& language = "python") {
    SandboxSpec spec{p, language};
    auto sb = shared_->create(spec);
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    if (!sb.ok()) return {};
    if (forked) *forked = NativeExecutor::from_zygote(**sb);
    ExecRequest req;
    req.argv = argv;
    auto r = shared_->exec(**sb, req);
    EXPECT_TRUE(shared_->destroy(**sb).ok());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }
  ExecResult zpy(const std::string& code, const Policy& p = python_policy(), bool* forked = nullptr) {
    return zrun({"/usr/bin/python3", "-c", code}, p, forked);
  }

  static pid_t template_pid() { return shared_->zygote_info()["python"]["pid"].get<pid_t>(); }

  static NativeExecutor* shared_;
  static Status* start_status_;
};
NativeExecutor* Zygote::shared_ = nullptr;
Status* Zygote::start_status_ = nullptr;

TEST_F(Zygote, TemplateHasTheImportsAndNothingElse) {
  auto info = shared_->zygote_info()["python"];
  std::set<std::string> loaded(info["preloaded"].begin(), info["preloaded"].end());
  EXPECT_TRUE(loaded.count("numpy") && loaded.count("pandas") && loaded.count("matplotlib.pyplot")) << info.dump();
  pid_t pid = template_pid();
  // Its own unprivileged ids, no capabilities, one thread, no groups.
  std::string uid = std::to_string(runtime::kZygoteHostId);
  EXPECT_EQ(proc_field(pid, "Uid"), uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ(proc_field(pid, "CapEff"), "0000000000000000");
  EXPECT_EQ(proc_field(pid, "CapPrm"), "0000000000000000");
  EXPECT_EQ(proc_field(pid, "Groups"), "");
  EXPECT_EQ(proc_field(pid, "Threads"), "1");
  // stdio (/dev/null), the control socket, the signalfd: nothing a child could inherit.
  EXPECT_LE(count_dir("/proc/" + std::to_string(pid) + "/fd"), 5);
}

TEST_F(Zygote, RunsWithThePreloadedModules) {
  bool forked = false;
  auto r = zpy("import sys; print('pandas' in sys.modules, 'matplotlib.pyplot' in sys.modules)", python_policy(),
               &forked);
  EXPECT_TRUE(forked);
  EXPECT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "True True\n");
  // The cold path gives the same program the same answer minus the preloading.
  auto cold = py("import sys; print('pandas' in sys.modules)", python_policy());
  EXPECT_EQ(cold.stdout_data, "False\n");
  auto pd = zpy("import pandas as pd; print(pd.DataFrame({'a': [1, 2]}).sum().to_dict())");
  EXPECT_EQ(pd.stdout_data, "{'a': 3}\n") << pd.stderr_data;
}

TEST_F(Zygote, IsolationIsTheColdPaths) {
  const char* probe =
      "import os, socket\n"
      "st = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
      "print(os.getuid(), os.getgid(), os.getgroups())\n"
      "print(st['CapEff'].strip(), st['CapBnd'].strip(), st['NoNewPrivs'].strip(), st['Seccomp'].strip())\n"
      "print(sorted(os.listdir('/proc/self/fd')))\n"
      "print(socket.gethostname(), sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else '-')\n"
      "print(sorted(os.environ))\n"
      "print(repr(open('/proc/self/cmdline','rb').read().strip(b'\\0')))\n"
      "print(os.getpid(), os.getppid())\n";
  auto z = zpy(probe);
  auto c = py(probe, python_policy());
  ASSERT_EQ(z.status(), ExecStatus::kOk) << z.stderr_data;
  ASSERT_EQ(c.status(), ExecStatus::kOk) << c.stderr_data;
  auto zl = z.stdout_data, cl = c.stdout_data;
  // Lines 1-5 (ids, caps, no_new_privs, seccomp, fds, hostname, env names) are identical.
  auto first_lines = [](const std::string& s, int n) {
    size_t pos = 0;
    for (int i = 0; i < n && pos != std::string::npos; ++i) pos = s.find('\n', pos + 1);
    return s.substr(0, pos);
  };
  EXPECT_EQ(first_lines(zl, 5), first_lines(cl, 5));
  EXPECT_NE(zl.find("1000 1000 []\n0000000000000000 0000000000000000 1 2\n"), std::string::npos) << zl;
  EXPECT_EQ(zl.find("zygote"), std::string::npos) << "the template's argv or env leaked: " << zl;
  EXPECT_EQ(zl.find("/var/cache/corral"), std::string::npos) << zl;
}

TEST_F(Zygote, ExitStatusesAndTracebacksAsPython) {
  auto exit3 = zpy("import sys; print('x'); sys.exit(3)");
  EXPECT_EQ(exit3.status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(exit3.exit_code, 3);
  EXPECT_EQ(exit3.stdout_data, "x\n");
  auto raised = zpy("def f():\n    raise ValueError('boom')\nf()");
  EXPECT_EQ(raised.exit_code, 1);
  EXPECT_NE(raised.stderr_data.find("ValueError: boom"), std::string::npos) << raised.stderr_data;
  EXPECT_NE(raised.stderr_data.find("line 2, in f"), std::string::npos) << raised.stderr_data;
  EXPECT_EQ(raised.stderr_data.find("corral-zygote"), std::string::npos) << raised.stderr_data;
  auto msg = zpy("raise SystemExit('bye')");
  EXPECT_EQ(msg.exit_code, 1);
  EXPECT_EQ(msg.stderr_data, "bye\n");
  auto missing = zrun({"/usr/bin/python3", "/sandbox/nope.py"}, python_policy());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.stderr_data.find("can't open file"), std::string::npos) << missing.stderr_data;
}

TEST_F(Zygote, LimitsApply) {
  auto t = zrun({"/usr/bin/python3", "-c", "while True: pass"}, python_policy(", \"limits\": {\"wall_ms\": 400}"));
  EXPECT_EQ(t.status(), ExecStatus::kTimeout);
  auto m = zpy("b = bytearray(512 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1",
               python_policy(", \"limits\": {\"memory_bytes\": 134217728}"));
  EXPECT_EQ(m.status(), ExecStatus::kOom) << m.stderr_data;
  auto denied = zpy("import os; os.unshare(os.CLONE_NEWUSER)");
  EXPECT_NE(denied.status(), ExecStatus::kOk);
}

TEST_F(Zygote, EveryRunStartsFromTheTemplateNotFromTheLastRun) {
  auto a = zpy("import json, random, numpy; json.MARK = 1; print(random.random(), numpy.random.rand())");
  auto b = zpy("import json, random, numpy; print(hasattr(json, 'MARK'), random.random(), numpy.random.rand())");
  ASSERT_EQ(a.status(), ExecStatus::kOk) << a.stderr_data;
  ASSERT_EQ(b.status(), ExecStatus::kOk) << b.stderr_data;
  ASSERT_EQ(b.stdout_data.rfind("False ", 0), 0u) << b.stdout_data;
  // Fresh randomness in each run, from random and from numpy's global generator.
  EXPECT_NE(a.stdout_data, b.stdout_data.substr(6));
  auto c = zpy("import random, numpy; print(random.random(), numpy.random.rand())");
  EXPECT_NE(a.stdout_data, c.stdout_data);
}

TEST_F(Zygote, OtherProgramsAreExecdForReal) {
  bool forked = false;
  auto sh = zrun({"/bin/sh", "-c", "echo $((6 * 7))"}, python_policy(), &forked);
  EXPECT_TRUE(forked);
  EXPECT_EQ(sh.stdout_data, "42\n");
  // -m is not served by the template: a real python3 runs it (pandas not preloaded there).
  auto m = zrun({"/usr/bin/python3", "-m", "json.tool"}, python_policy());
  EXPECT_EQ(m.status(), ExecStatus::kNonzeroExit);  // no input on stdin: json.tool fails
  EXPECT_NE(m.stderr_data.find("Expecting value"), std::string::npos) << m.stderr_data;
}

TEST_F(Zygote, FallsBackToColdWhenThereIsNoTemplate) {
  uint64_t before = shared_->zygote_fallbacks();
  bool forked = true;
  auto r = zrun({"/bin/echo", "cold"}, python_policy(), &forked, "javascript");
  EXPECT_FALSE(forked);
  EXPECT_EQ(r.stdout_data, "cold\n");
  EXPECT_EQ(shared_->zygote_fallbacks(), before + 1);
}

TEST_F(Zygote, NothingOutlivesItsSandbox) {
  pid_t tpl = template_pid();
  for (int i = 0; i < 30; ++i) {
    auto r = zpy("import subprocess; subprocess.Popen(['sleep', '30']); print('ok')");
    ASSERT_EQ(r.stdout_data, "ok\n") << r.stderr_data;
  }
  // The template reaps its children as they end; give it a moment to see the last SIGCHLD.
  for (int i = 0; i < 100 && !children_of(tpl).empty(); ++i) usleep(10'000);
  EXPECT_TRUE(children_of(tpl).empty());
  if (auto d = shared_->cgroups(); d.ok()) {
    for (const auto& dir : (*d)->subtree_dirs()) {
      DIR* dd = opendir(dir.c_str());
      if (!dd) continue;  // removed when it emptied (by this or another corral process)
      int n = 0;
      while (dirent* e = readdir(dd)) {
        // This process's sandboxes only: another corral may be running on the host.
        n += e->d_type == DT_DIR && std::string(e->d_name).rfind("n" + std::to_string(getpid()) + "-", 0) == 0;
      }
      closedir(dd);
      EXPECT_EQ(n, 0) << dir;
    }
  }
}

TEST_F(Zygote, ADeadTemplateMeansColdSandboxes) {
  NativeExecutor ex;
  ASSERT_TRUE(ex.start_zygote(runtime::ZygoteOptions{.preload = {"json"}, .warmup = ""}).ok());
  pid_t pid = ex.zygote_info()["python"]["pid"].get<pid_t>();
  auto before = ex.create(SandboxSpec{python_policy(), "python"});
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  ASSERT_TRUE(NativeExecutor::from_zygote(**before));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  for (int i = 0; i < 100 && ex.zygote_info()["python"]["alive"].get<bool>(); ++i) usleep(10'000);
  // A sandbox forked before the template died is corral's to run and to destroy.
  ExecRequest hi;
  hi.argv = {"/usr/bin/python3", "-c", "print('still here')"};
  auto still = ex.exec(**before, hi);
  ASSERT_TRUE(still.ok()) << still.status().to_string();
  EXPECT_EQ(still->stdout_data, "still here\n");
  EXPECT_TRUE(ex.destroy(**before).ok());
  auto sb = ex.create(SandboxSpec{python_policy(), "python"});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  EXPECT_FALSE(NativeExecutor::from_zygote(**sb));
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "print(1)"};
  auto r = ex.exec(**sb, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data, "1\n");
  EXPECT_TRUE(ex.destroy(**sb).ok());
}

// Sessions ask for their language's zygote: plots still come back (the artifact hooks are
// applied to the already-imported pyplot), and interactive sessions keep their state.
TEST_F(Zygote, SessionsUseItWithArtifactsAndInteractiveState) {
  SessionOptions o;
  o.language = "python";
  auto s = Session::open(*shared_, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run(
      "import sys\nprint('pandas' in sys.modules)\nimport matplotlib.pyplot as plt\n"
      "plt.plot([1, 2, 3]); plt.show()\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "True\n") << r->stderr_data;
  ASSERT_EQ(r->artifacts.size(), 1u) << r->stderr_data;
  EXPECT_EQ(r->artifacts[0].mime, "image/png");
  EXPECT_EQ(r->artifacts[0].bytes.substr(1, 3), "PNG");

  o.interactive = true;
  auto i = Session::open(*shared_, o);
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  auto a = (*i)->run("import sys\nx = 20\n'pandas' in sys.modules");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->value, std::optional<std::string>("True")) << a->stderr_data;
  auto b = (*i)->run("x + 22");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->value, std::optional<std::string>("42")) << b->stderr_data;
}

}  // namespace
}  // namespace corral::testing
