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

int count_dir(const std::string& path) {
  DIR* d = opendir(path.c_str());
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// The template's children that are spares: user namespaces nobody has mapped ids into yet
// (corral maps every sandbox's as it makes it).
std::vector<pid_t> spares_of(pid_t tpl) {
  std::vector<pid_t> out;
  for (pid_t c : children_of(tpl)) {
    std::ifstream f("/proc/" + std::to_string(c) + "/uid_map");
    std::string map;
    if (f && !std::getline(f, map)) out.push_back(c);
  }
  return out;
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

  // One zygote sandbox, one exec; `forked` says whether the zygote made it. `idle_ms`: how
  // long the sandbox waits before the exec (long enough, and the exec is served by a worker
  // corral-init prepared and rehearsed meanwhile; see runtime/worker.h).
  ExecResult zrun(const std::vector<std::string>& argv, const Policy& p, bool* forked = nullptr,
                  const std::string& language = "python", int idle_ms = 0) {
    SandboxSpec spec{p, language};
    auto sb = shared_->create(spec);
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    if (!sb.ok()) return {};
    if (forked) *forked = NativeExecutor::from_zygote(**sb);
    if (idle_ms) usleep(idle_ms * 1000);
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
  void check_no_request_in_memory(NativeExecutor& ex);

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
  EXPECT_EQ(proc_status_field(pid, "Uid"), uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ(proc_status_field(pid, "CapEff"), "0000000000000000");
  EXPECT_EQ(proc_status_field(pid, "CapPrm"), "0000000000000000");
  EXPECT_EQ(proc_status_field(pid, "Groups"), "");
  EXPECT_EQ(proc_status_field(pid, "Threads"), "1");
  // stdio (/dev/null), the control socket, the signalfd, its spare's socket: nothing a
  // child could inherit.
  EXPECT_LE(count_dir("/proc/" + std::to_string(pid) + "/fd"), 6);
  // While no sandbox exists its one child is the spare (ZygoteOptions::spare, on by default),
  // made ahead and holding nothing (TheSpareHoldsNothing). Sandboxes of earlier tests may
  // still be ending.
  for (int i = 0; i < 200 && (children_of(pid) != spares_of(pid) || spares_of(pid).empty()); ++i) usleep(10'000);
  EXPECT_EQ(spares_of(pid).size(), 1u);
  EXPECT_EQ(children_of(pid), spares_of(pid));
}

// With ZygoteOptions::spare the next sandbox's clone is made ahead. Until a request makes
// it a sandbox's init it is the template's unprivileged uid in fresh namespaces no id is
// mapped into, holding stdio and its socket to the template, nothing else; the template
// holds one more fd (that socket's other end).
TEST_F(Zygote, TheSpareHoldsNothing) {
  NativeExecutor ex;
  ASSERT_TRUE(ex.start_zygote(runtime::ZygoteOptions{.preload = {"json"}, .warmup = "", .spare = true}).ok());
  pid_t tpl = ex.zygote_info()["python"]["pid"].get<pid_t>();
  std::vector<pid_t> spares;
  for (int i = 0; i < 200 && (spares = spares_of(tpl)).empty(); ++i) usleep(10'000);
  ASSERT_EQ(spares.size(), 1u);
  EXPECT_EQ(children_of(tpl).size(), 1u);
  EXPECT_LE(count_dir("/proc/" + std::to_string(tpl) + "/fd"), 6);
  std::string dir = "/proc/" + std::to_string(spares[0]);
  std::string uid = std::to_string(runtime::kZygoteHostId);
  EXPECT_EQ(proc_status_field(spares[0], "Uid"), uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ(proc_status_field(spares[0], "Groups"), "");
  EXPECT_EQ(proc_status_field(spares[0], "Threads"), "1");
  EXPECT_EQ(count_dir(dir + "/fd"), 4);  // stdio, the socket
  for (const char* ns : {"user", "mnt", "pid", "net", "ipc", "uts"}) {
    char mine[64] = {}, its[64] = {};
    ASSERT_GT(readlink(("/proc/self/ns/" + std::string(ns)).c_str(), mine, sizeof mine - 1), 0);
    ASSERT_GT(readlink((dir + "/ns/" + ns).c_str(), its, sizeof its - 1), 0);
    EXPECT_STRNE(mine, its) << ns;
  }
  // The spare becomes the next sandbox's init, and a new one is made.
  auto sb = ex.create(SandboxSpec{python_policy(), "python"});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  EXPECT_TRUE(NativeExecutor::from_zygote(**sb));
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "print('taken')"};
  auto r = ex.exec(**sb, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "taken\n");
  EXPECT_EQ(spares_of(tpl).size() + 1, children_of(tpl).size());  // the sandbox's init
  std::vector<pid_t> after;
  for (int i = 0; i < 200 && ((after = spares_of(tpl)).empty() || after == spares); ++i) usleep(10'000);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], spares[0]);
  EXPECT_TRUE(ex.destroy(**sb).ok());
  // Sandboxes end as with no spare: the spare is all that stays.
  for (int i = 0; i < 100 && children_of(tpl).size() > 1; ++i) usleep(10'000);
  EXPECT_EQ(children_of(tpl), spares_of(tpl));
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
  // What stays is its spare, no sandbox's yet.
  for (int i = 0; i < 100 && children_of(tpl) != spares_of(tpl); ++i) usleep(10'000);
  EXPECT_EQ(children_of(tpl), spares_of(tpl));
  EXPECT_LE(children_of(tpl).size(), 1u);
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
  // Also the path without a snapshot of the template's memory.
  ASSERT_TRUE(ex.start_zygote(runtime::ZygoteOptions{.preload = {"json"}, .warmup = "", .snapshot = false}).ok());
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

// What the template was sent for one sandbox (its policy: environment, mounts, hostname)
// must not be in the memory of the next: a sandbox's program can read all of its own
// memory, and that memory is a copy of the template's.
// Checked with and without a spare (the spare is cloned before the request it gets).
TEST_F(Zygote, NothingOfAnotherSandboxsRequestIsInMemory) {
  NativeExecutor without_spare;
  ASSERT_TRUE(without_spare.start_zygote(runtime::ZygoteOptions{.spare = false}).ok());
  for (NativeExecutor* ex : {shared_, &without_spare}) {
    SCOPED_TRACE(ex == shared_ ? "spare" : "no spare");
    check_no_request_in_memory(*ex);
  }
}

void Zygote::check_no_request_in_memory(NativeExecutor& ex) {
  auto run = [&](const std::string& code, const Policy& p) {
    auto sb = ex.create(SandboxSpec{p, "python"});
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    if (!sb.ok()) return ExecResult{};
    EXPECT_TRUE(NativeExecutor::from_zygote(**sb));
    ExecRequest req;
    req.argv = {"/usr/bin/python3", "-c", code};
    auto r = ex.exec(**sb, req);
    EXPECT_TRUE(ex.destroy(**sb).ok());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  };
  std::string marker = "corral-leak-probe-" + std::to_string(getpid()) + "-" + std::to_string(time(nullptr));
  Policy a = python_policy(", \"env\": {\"PROBE\": \"" + marker + "\"}");
  auto first = run("import os; print(os.environ['PROBE'])", a);
  ASSERT_EQ(first.stdout_data, marker + "\n") << first.stderr_data;
  // The marker, split so that the program's own source never holds it.
  const std::string half = marker.substr(0, marker.size() / 2), rest = marker.substr(marker.size() / 2);
  // The scan reads its memory in chunks into one buffer (skipped itself) and matches the
  // two halves apart: the whole marker exists only where something left it.
  const std::string scan =
      "import ctypes\n"
      "half, rest = b'" + half + "', b'" + rest + "'\n"
      "buf = bytearray(8 << 20)\n"
      "lo_buf = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))\n"
      "found = scanned = 0\n"
      "with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:\n"
      "    for line in maps.read().splitlines():\n"
      "        f = line.split()\n"
      "        lo, hi = (int(x, 16) for x in f[0].split('-'))\n"
      "        if f[1][0] != 'r' or (len(f) > 5 and f[5].startswith('[v')) or (lo < lo_buf + len(buf) and lo_buf < hi):\n"
      "            continue\n"
      "        at = lo\n"
      "        while at < hi:\n"
      "            n = min(len(buf), hi - at)\n"
      "            try:\n"
      "                mem.seek(at)\n"
      "                got = mem.readinto(memoryview(buf)[:n])\n"
      "            except OSError:\n"
      "                break\n"
      "            scanned += got\n"
      "            pos = buf.find(half, 0, got)\n"
      "            while pos >= 0:\n"
      "                found += buf[pos + len(half):pos + len(half) + len(rest)] == rest\n"
      "                pos = buf.find(half, pos + 1, got)\n"
      "            at += max(got - len(half) - len(rest), 1)\n"
      "print(found, scanned > (32 << 20))\n";
  for (int i = 0; i < 2; ++i) {  // the next sandbox, and the one after
    auto r = run(scan, python_policy());
    ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
    EXPECT_EQ(r.stdout_data, "0 True\n") << "run " << i;
  }
}

// The template runs the preloaded modules' at-fork hooks in each child itself and registers
// them for real there: a program that forks gets what python3 gives it (a reseeded random in
// the child, its own hooks run, threads and logging working, multiprocessing's fork pool).
TEST_F(Zygote, ForksInTheProgramWorkAsInPython) {
  auto r = zpy(
      "import logging, multiprocessing, os, random, sys, threading\n"
      "logging.basicConfig(stream=sys.stderr, format='%(message)s', level=logging.INFO)\n"
      "seen = []\n"
      "os.register_at_fork(after_in_child=lambda: seen.append('hook'))\n"
      "r, w = os.pipe()\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    t = threading.Thread(target=seen.append, args=('thread',)); t.start(); t.join()\n"
      "    logging.info('logged in the child')\n"
      "    os.write(w, repr((random.random(), seen, threading.current_thread() is threading.main_thread())).encode())\n"
      "    os._exit(0)\n"
      "os.close(w)\n"
      "got = os.read(r, 4096).decode()\n"
      "os.waitpid(pid, 0)\n"
      "rand, child_seen, main = eval(got)\n"
      "print(rand != random.random(), child_seen, main, seen)\n"
      "with multiprocessing.get_context('fork').Pool(2) as pool:\n"
      "    print(pool.map(abs, [-1, -2, -3]))\n");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "True ['hook', 'thread'] True []\n[1, 2, 3]\n");
  EXPECT_NE(r.stderr_data.find("logged in the child"), std::string::npos) << r.stderr_data;
}

// os.environ, os.environb and the C library's environment are the exec's, and changes to
// os.environ reach programs the code starts, as in python3.
// A sandbox that waited before its exec is served by a prepared worker that rehearsed a run
// of `pass` (python_prepare): the program still sees only its own argv, environment,
// __main__ and randomness, and its atexit functions run (the rehearsal runs none).
TEST_F(Zygote, APreparedWorkerRunsLikeAFreshFork) {
  const std::string code =
      "import atexit, os, random, sys, numpy\n"
      "atexit.register(lambda: print('atexit ran'))\n"
      "print(sys.argv, __name__, sorted(k for k in vars(sys.modules['__main__']) if not k.startswith('__')))\n"
      "print(os.environ.get('PROBE'), 'PYTHONDONTWRITEBYTECODE' in os.environ)\n"
      "print(random.random(), numpy.random.rand())\n"
      "sys.exit(4)\n";
  const Policy p = python_policy(", \"env\": {\"PROBE\": \"from-the-policy\"}");
  std::vector<std::string> randoms;
  for (int idle_ms : {150, 150, 0}) {
    SCOPED_TRACE(idle_ms);
    bool forked = false;
    auto r = zrun({"/usr/bin/python3", "-c", code, "arg1"}, p, &forked, "python", idle_ms);
    ASSERT_TRUE(forked);
    EXPECT_EQ(r.exit_code, 4) << r.stderr_data;
    std::istringstream lines(r.stdout_data);
    std::string argv_line, env_line, random_line, atexit_line;
    std::getline(lines, argv_line);
    std::getline(lines, env_line);
    std::getline(lines, random_line);
    std::getline(lines, atexit_line);
    EXPECT_EQ(argv_line, "['-c', 'arg1'] __main__ ['atexit', 'numpy', 'os', 'random', 'sys']");
    EXPECT_EQ(env_line, "from-the-policy False");
    EXPECT_EQ(atexit_line, "atexit ran");
    randoms.push_back(random_line);
  }
  EXPECT_NE(randoms[0], randoms[1]);
  EXPECT_NE(randoms[0], randoms[2]);
  // A program the interpreter does not take, after the same wait: exec'd by a worker cloned
  // for it (the prepared one is discarded).
  bool forked = false;
  auto sh = zrun({"/bin/sh", "-c", "echo sh $#", "x", "a", "b"}, p, &forked, "python", 150);
  ASSERT_TRUE(forked);
  EXPECT_EQ(sh.status(), ExecStatus::kOk) << sh.stderr_data << sh.message;
  EXPECT_EQ(sh.stdout_data, "sh 2\n");
}

long anonymous_kb(pid_t pid) {
  std::ifstream rollup("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("Anonymous:", 0) == 0) return std::stol(line.substr(10));
  }
  return -1;
}

// ZygoteOptions::prefault: the template found out once which of its pages a run of the
// warm-up writes, and a sandbox's prepared worker has its own copies of them before any
// request comes; corral-init, which copies none of them, holds far less of its own.
TEST_F(Zygote, APreparedWorkerCopiesWhatTheWarmupWrites) {
  auto info = shared_->zygote_info()["python"];
  const long prefault_kb = info.value("prefault_kb", 0L);
  ASSERT_GT(prefault_kb, 1024) << info.dump();  // numpy, pandas and matplotlib write megabytes
  ASSERT_LT(prefault_kb, 256 << 10) << info.dump();
  // The spare becomes the next sandbox's init (ZygoteOptions::spare).
  const pid_t tpl = template_pid();
  std::vector<pid_t> spares;
  for (int i = 0; i < 200 && (spares = spares_of(tpl)).empty(); ++i) usleep(5'000);
  ASSERT_EQ(spares.size(), 1u);
  const pid_t init = spares[0];
  auto sb = shared_->create(SandboxSpec{python_policy(), "python"});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ASSERT_FALSE(proc_status_field(init, "NSpid").empty());
  ASSERT_NE(spares_of(tpl), std::vector<pid_t>{init});
  std::vector<pid_t> workers;
  for (int i = 0; i < 200 && (workers = children_of(init)).empty(); ++i) usleep(5'000);
  ASSERT_EQ(workers.size(), 1u);  // the prepared worker
  long worker_kb = -1;
  for (int i = 0; i < 200 && (worker_kb = anonymous_kb(workers[0])) < prefault_kb * 9 / 10; ++i) usleep(5'000);
  EXPECT_GE(worker_kb, prefault_kb * 9 / 10);
  EXPECT_LT(anonymous_kb(init), prefault_kb / 2);
  // And it serves the exec as any prepared worker does.
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "import pandas as pd; print(pd.DataFrame({'a': [1, 2]}).a.sum())"};
  auto r = shared_->exec(**sb, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "3\n") << r->stderr_data;
  EXPECT_TRUE(shared_->destroy(**sb).ok());

  // Under a memory limit the copies would take much of, the prepared worker makes none.
  for (int i = 0; i < 200 && (spares = spares_of(tpl)).empty(); ++i) usleep(5'000);
  ASSERT_EQ(spares.size(), 1u);
  const pid_t small_init = spares[0];
  auto small = shared_->create(SandboxSpec{python_policy(", \"limits\": {\"memory_bytes\": 67108864}"), "python"});
  ASSERT_TRUE(small.ok()) << small.status().to_string();
  for (int i = 0; i < 200 && (workers = children_of(small_init)).empty(); ++i) usleep(5'000);
  ASSERT_EQ(workers.size(), 1u);
  usleep(100'000);  // time enough for copies it would make
  EXPECT_LT(anonymous_kb(workers[0]), prefault_kb / 2);
  r = shared_->exec(**small, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "3\n") << r->stderr_data;
  EXPECT_TRUE(shared_->destroy(**small).ok());
}

// An interpreting worker's memory lives on in a holder after its exit (hold_memory in
// runtime/worker.cc) only until corral-init has answered: the next exec in the sandbox, back
// to back or after a wait, finds no process but its own (init is hidden from it).
TEST_F(Zygote, NoHolderOutlivesItsExec) {
  SandboxSpec spec{python_policy(), "python"};
  auto sb = shared_->create(spec);
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ASSERT_TRUE(NativeExecutor::from_zygote(**sb));
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c",
              "import os\nprint([p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()])"};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    if (i >= 3) usleep(100'000);
    auto r = shared_->exec(**sb, req);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->stdout_data, "[]\n") << r->stderr_data;
  }
  EXPECT_TRUE(shared_->destroy(**sb).ok());
}

TEST_F(Zygote, EnvironmentIsTheExecs) {
  auto r = zpy(
      "import ctypes, os, subprocess\n"
      "libc = ctypes.CDLL(None)\n"
      "libc.getenv.restype = ctypes.c_char_p\n"
      "print(os.environ['PROBE'], os.environb[b'PROBE'].decode(), libc.getenv(b'PROBE').decode())\n"
      "print(libc.getenv(b'MPLCONFIGDIR'), 'MPLCONFIGDIR' in os.environ)\n"
      "os.environ['ADDED'] = 'yes'\n"
      "del os.environ['PROBE']\n"
      "print(subprocess.run(['/bin/sh', '-c', 'echo ${PROBE:-unset} $ADDED'], capture_output=True, text=True).stdout, end='')\n",
      python_policy(", \"env\": {\"PROBE\": \"from-the-policy\"}"));
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "from-the-policy from-the-policy from-the-policy\nNone False\nunset yes\n");
}

// The template's anonymous memory lives in a sealed memfd mapped privately (ZygoteOptions::
// snapshot): the template keeps it there (it writes next to none of it), a sandbox sees
// private mappings of it, and cannot get at the file itself to change what the next sandbox
// starts from.
TEST_F(Zygote, TheTemplatesMemoryIsASealedSnapshot) {
  auto info = shared_->zygote_info()["python"];
  ASSERT_TRUE(info.value("snapshot", false)) << info.dump();
  zpy("print(1)");  // at least one sandbox made since
  const long anon_kb = anonymous_kb(template_pid());
  // ~60 MB of it is in the snapshot; what stays anonymous is the stack, libraries' data and
  // the top of malloc's heap.
  EXPECT_GE(anon_kb, 0);
  EXPECT_LT(anon_kb, 16 << 10) << anon_kb;
  auto r = zpy(
      "import os\n"
      "maps = [l.split() for l in open('/proc/self/maps') if 'memfd:corral-zygote' in l]\n"
      "opened = 0\n"
      "for m in maps:\n"
      "    for mode in ('rb', 'r+b'):\n"
      "        try:\n"
      "            open('/proc/self/map_files/' + m[0], mode).close()\n"
      "            opened += 1\n"
      "        except OSError:\n"
      "            pass\n"
      "print(len(maps) > 10, all(m[1] == 'rw-p' for m in maps), opened)\n");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "True True 0\n");
}

}  // namespace
}  // namespace corral::testing
