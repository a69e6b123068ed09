// The exec worker corral-init prepares while a sandbox is idle (run_prepared_worker in
// runtime/worker.h): what it is while it waits, seen from the host; that an exec it serves
// is the same as one served by a worker cloned for the request (stdio, cwd, env, exit status,
// failures); that no process of the sandbox can ever see it; and that init does without it
// where the filter would not let it finish a request.
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

using std::chrono::milliseconds;

// Longer than corral-init's delay before it prepares the next worker (kPrepareDelayMs).
constexpr milliseconds kIdle{120};

class PreparedWorker : public SandboxTest {
 protected:
  // The sandbox and its corral-init's host pid (the newest child of this process).
  std::unique_ptr<Sandbox> make(const Policy& p, pid_t* init) {
    auto before = children_of(getpid());
    auto sb = executor_.create(SandboxSpec{p});
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    if (!sb.ok()) return nullptr;
    for (pid_t c : children_of(getpid())) {
      if (std::find(before.begin(), before.end(), c) == before.end()) *init = c;
    }
    EXPECT_GT(*init, 0);
    return std::move(sb).value();
  }

  // The children of `init` once the sandbox has been idle for a while.
  static std::vector<pid_t> idle_children(pid_t init) {
    std::this_thread::sleep_for(kIdle);
    return children_of(init);
  }

  ExecResult exec(Sandbox& sb, std::vector<std::string> argv, const std::string& cwd = "",
                  std::map<std::string, std::string> env = {}, std::string in = "") {
    ExecRequest req;
    req.argv = std::move(argv);
    if (!cwd.empty()) req.cwd = cwd;
    req.env = std::move(env);
    req.stdin_data = std::move(in);
    auto r = executor_.exec(sb, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }
};

TEST_F(PreparedWorker, WaitsUnprivilegedFilteredAndAlone) {
  pid_t init = 0;
  auto sb = make(Policy{}, &init);
  ASSERT_TRUE(sb);
  auto kids = idle_children(init);
  ASSERT_EQ(kids.size(), 1u) << "an idle sandbox: corral-init and one prepared worker";
  const pid_t w = kids[0];
  // The sandbox user (uid 1000 inside: an unprivileged host id, not init's), no
  // capabilities in any set, no_new_privs, its filter installed, one session of its own.
  std::istringstream uids(proc_status_field(w, "Uid")), init_uids(proc_status_field(init, "Uid"));
  uid_t ruid, euid, suid, init_uid;
  uids >> ruid >> euid >> suid;
  init_uids >> init_uid;
  EXPECT_EQ(ruid, euid);
  EXPECT_EQ(euid, suid);
  EXPECT_NE(euid, 0u);
  EXPECT_NE(euid, init_uid);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(proc_status_field(w, set), "0000000000000000") << set;
  }
  EXPECT_EQ(proc_status_field(w, "NoNewPrivs"), "1");
  EXPECT_EQ(proc_status_field(w, "Seccomp"), "2");
  // In a cold sandbox it shares init's memory rather than copying it (see worker.h).
  EXPECT_EQ(syscall(SYS_kcmp, w, init, KCMP_VM, 0, 0), 0) << strerror(errno);
  // Non-dumpable: its memory (a copy of init's) is closed to every process of the sandbox
  // user; root on the host can still read its fd table, which is stdio on /dev/null and
  // the request socket alone.
  std::vector<std::string> fds;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(w) + "/fd")) {
    fds.push_back(e.path().filename().string() + " -> " + std::filesystem::read_symlink(e.path()).string());
  }
  std::sort(fds.begin(), fds.end());
  ASSERT_EQ(fds.size(), 4u) << ::testing::PrintToString(fds);
  for (int i = 0; i < 3; ++i) {  // /dev/null in the sandbox (the host sees the path in its mount: /null)
    EXPECT_TRUE(fds[i].rfind(std::to_string(i) + " -> /", 0) == 0 && fds[i].size() > 5 &&
                fds[i].substr(fds[i].size() - 5) == "/null")
        << fds[i];
  }
  EXPECT_EQ(fds[3].rfind("3 -> socket:", 0), 0u) << fds[3];
  std::ifstream stat("/proc/" + std::to_string(w) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  char state;
  int ppid, pgrp, session;
  rest >> state >> ppid >> pgrp >> session;
  EXPECT_EQ(pgrp, w);
  EXPECT_EQ(session, w) << "setsid";
  executor_.destroy(*sb);
  EXPECT_NE(kill(w, 0), 0) << "the prepared worker outlived its sandbox";
}

TEST_F(PreparedWorker, ServesExecsLikeAClonedWorker) {
  pid_t init = 0;
  auto sb = make(Policy{}, &init);
  ASSERT_TRUE(sb);
  // Alternately after idleness (a prepared worker serves it) and back to back (one cloned
  // for the request): the same results.
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    const bool prepared = round % 2 == 0;
    if (prepared) {
      ASSERT_EQ(idle_children(init).size(), 1u);
    }
    ExecResult r = exec(*sb, {"/bin/sh", "-c", "read l; echo \"$l $PWD $VAR\"; echo err >&2; exit 7"}, "/tmp",
                        {{"VAR", "v" + std::to_string(round)}}, "in\n");
    EXPECT_EQ(r.exit_code, 7);
    EXPECT_EQ(r.stdout_data, "in /tmp v" + std::to_string(round) + "\n");
    EXPECT_EQ(r.stderr_data, "err\n");
    // Failures are reported as the step that failed, as before.
    if (prepared) std::this_thread::sleep_for(kIdle);
    ExecRequest req;
    req.argv = {"/bin/true"};
    req.cwd = "/no/such/dir";
    auto bad = executor_.exec(*sb, req);
    ASSERT_TRUE(bad.ok()) << bad.status().to_string();
    EXPECT_EQ(bad->status(), ExecStatus::kSetupError);
    EXPECT_NE(bad->message.find("chdir"), std::string::npos) << bad->message;
    if (prepared) std::this_thread::sleep_for(kIdle);
    auto missing = exec(*sb, {"/no/such/program"});
    EXPECT_EQ(missing.status(), ExecStatus::kSetupError);
    EXPECT_NE(missing.message.find("/no/such/program"), std::string::npos) << missing.message;
  }
  executor_.destroy(*sb);
}

TEST_F(PreparedWorker, NeverSeenByTheSandbox) {
  pid_t init = 0;
  auto sb = make(Policy{}, &init);
  ASSERT_TRUE(sb);
  // An exec served by the prepared worker sees no other process (init, another user's, is
  // hidden from it; a second worker would run as its own user and be listed): the next worker
  // is made only once the exec and all it started are gone.
  ASSERT_EQ(idle_children(init).size(), 1u);
  ExecResult r = exec(*sb, {"/usr/bin/python3", "-c",
                            "import os, time\n"
                            "time.sleep(0.3)\n"
                            "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()))"});
  EXPECT_EQ(r.stdout_data, "[]\n") << r.stderr_data;
  // While a detached program runs, none is prepared.
  ExecRequest d;
  d.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 30"};
  auto started = executor_.exec_detached(*sb, d);
  ASSERT_TRUE(started.ok()) << started.status().to_string();
  EXPECT_EQ(idle_children(init).size(), 1u) << "the detached program alone";
  executor_.destroy(*sb);
}

TEST_F(PreparedWorker, NotMadeWhereTheFilterWouldStopIt) {
  // A profile that denies chdir: a prepared worker could not take a request's cwd after its
  // filter, so init clones a worker per request (which changes directory before the filter).
  char path[] = "/tmp/corral-prepared-XXXXXX.json";
  int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  const std::string profile = R"({"name": "nochdir", "default_action": "allow", "bad_arch_action": "kill",
    "rules": [{"names": ["chdir", "fchdir"], "action": "errno:EPERM"}]})";
  ASSERT_EQ(write(fd, profile.data(), profile.size()), static_cast<ssize_t>(profile.size()));
  close(fd);
  pid_t init = 0;
  auto sb = make(policy(std::string(R"({"seccomp": ")") + path + "\"}"), &init);
  unlink(path);
  ASSERT_TRUE(sb);
  EXPECT_EQ(idle_children(init).size(), 0u);
  ExecResult r = exec(*sb, {"/bin/sh", "-c", "pwd; cd / 2>/dev/null || echo denied"}, "/tmp");
  EXPECT_EQ(r.stdout_data, "/tmp\ndenied\n") << r.stderr_data << r.message;
  executor_.destroy(*sb);
}

}  // namespace
}  // namespace corral::testing
