// The red-team suite, part 2: what crosses the sandbox boundary through corral's own API
// and between sandboxes - get_files / put_files traps (REDTEAM rows 35 and 18), one sandbox
// against another's files (39), and many parallel requests leaking nothing (40, partial:
// there is no server or admission control yet). Needs root; skips otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "tests/redteam/redteam_fixture.h"

namespace corral::redteam {
namespace {

namespace fs = std::filesystem;

TEST_F(Redteam, Row35_GetFilesRefusesSymlinksAndSpecialFiles) {
  const std::string host_file = "/tmp/corral-rt35-" + std::to_string(getpid());
  const std::string host_secret = "HOST-SECRET-" + random_hex(16);
  ASSERT_TRUE(write_text(host_file, host_secret, 0644));
  const std::string shadow = read_text("/etc/shadow");
  const std::string passwd = read_text("/etc/passwd");
  ASSERT_FALSE(shadow.empty());
  auto sb = Create();
  ASSERT_TRUE(sb);
  ExpectAllSafe(Exec(*sb, {"/probes/row35_plant", host_file}), 9);
  // Sanity: a plain file comes out.
  ASSERT_TRUE(ex_.put_files(*sb, {{"plain.txt", "plain", 0644}}).ok());
  auto plain = ex_.get_files(*sb, {"plain.txt"}, 1 << 20);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ((*plain)[0].data, "plain");

  // Each must be refused; whatever comes back must never be host data.
  for (const std::string& path : std::vector<std::string>{
           "link", "dotdot", "dev", "hostfile", "fifo", "procroot/etc/hostname", "selfroot/etc/hostname",
           "/proc/1/root/etc/hostname", "rootdir/etc/shadow", "rootdir" + host_file, "../../../../etc/shadow",
           "/sandbox/../etc/shadow"}) {
    SCOPED_TRACE(path);
    auto t0 = std::chrono::steady_clock::now();
    auto got = ex_.get_files(*sb, {path}, 1 << 20);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 2000) << "get_files hung on " << path;
    EXPECT_FALSE(got.ok()) << "get_files returned " << path;
    if (got.ok()) {
      for (const auto& f : *got) {
        EXPECT_NE(f.data, shadow);
        EXPECT_NE(f.data, host_secret);
      }
    }
  }
  // Through a directory symlink to "/": allowed, but resolved inside the sandbox's root.
  auto inside = ex_.get_files(*sb, {"rootdir/etc/passwd"}, 1 << 20);
  if (inside.ok()) {
    EXPECT_NE((*inside)[0].data, passwd) << "got the host's /etc/passwd";
  }
  // /proc of the sandbox, read by the (root) supervisor: nothing of the supervisor's own env.
  for (std::string path : {"/proc/1/environ", "/proc/1/cmdline"}) {
    auto got = ex_.get_files(*sb, {path}, 1 << 20);
    if (got.ok()) {
      EXPECT_TRUE((*got)[0].data.empty()) << path << " leaked " << (*got)[0].data.size() << " bytes";
    }
  }
  EXPECT_EQ(read_text(host_file), host_secret);
  unlink(host_file.c_str());
}

TEST_F(Redteam, Row35_PutFilesStaysInsideTheSandbox) {
  const std::string tag = std::to_string(getpid()) + "-" + random_hex(6);
  const std::string host_file = "/tmp/corral-rt35p-" + tag;
  ASSERT_TRUE(write_text(host_file, "untouched", 0644));
  const std::string core_pattern = read_text("/proc/sys/kernel/core_pattern");
  auto sb = Create();
  ASSERT_TRUE(sb);
  ExpectAllSafe(Exec(*sb, {"/probes/row35_plant", host_file}), 9);
  const std::string slip = "corral-rt35-slip-" + tag;
  // Traversal and traps: each refused.
  for (const std::string& path : std::vector<std::string>{
           "../../" + slip, "/../../../tmp/" + slip, "/sandbox/../../" + slip, "hostfile", "link", "fifo",
           "procroot/tmp/" + slip, "selfroot/tmp/" + slip, "/proc/1/root/tmp/" + slip, "/proc/1/mem",
           "/proc/sys/kernel/core_pattern", "/proc/1/oom_score_adj", "/proc/1/comm", "/usr/" + slip}) {
    SCOPED_TRACE(path);
    std::string data = path == "/proc/sys/kernel/core_pattern" ? core_pattern : "pwned";
    Status s = ex_.put_files(*sb, {{path, data, 0644}});
    EXPECT_FALSE(s.ok()) << "put_files accepted " << path;
  }
  // /proc entries outside the pid directories are global: the (root) supervisor must not
  // chown, chmod or write them on the caller's behalf. Empty data: nothing is written even
  // if the open succeeded; the ownership and mode are restored if they changed.
  struct stat mtrr;
  if (stat("/proc/mtrr", &mtrr) == 0) {
    Status s = ex_.put_files(*sb, {{"/proc/mtrr", "", 0600}});
    struct stat now;
    ASSERT_EQ(stat("/proc/mtrr", &now), 0);
    EXPECT_FALSE(s.ok()) << "put_files opened the host's /proc/mtrr for writing";
    EXPECT_EQ(now.st_uid, mtrr.st_uid) << "put_files chowned the host's /proc/mtrr";
    EXPECT_EQ(now.st_mode, mtrr.st_mode) << "put_files chmodded the host's /proc/mtrr";
    if (now.st_uid != mtrr.st_uid || now.st_mode != mtrr.st_mode) {
      chown("/proc/mtrr", mtrr.st_uid, mtrr.st_gid);
      chmod("/proc/mtrr", mtrr.st_mode & 07777);
    }
  }
  // Through a directory symlink (etcdir -> /etc): allowed only inside the sandbox's root.
  (void)ex_.put_files(*sb, {{"etcdir/" + slip, "x", 0644}});
  // Nothing landed on the host.
  std::string cwd = fs::current_path();
  for (const std::string& dir :
       std::vector<std::string>{"/", "/tmp", "/etc", "/run/corral", "/run/corral/mnt", "/run", cwd, dir_}) {
    struct stat st;
    EXPECT_NE(lstat((dir + "/" + slip).c_str(), &st), 0) << "put_files wrote " << dir << "/" << slip << " on the host";
  }
  EXPECT_EQ(read_text(host_file), "untouched");
  EXPECT_EQ(read_text("/proc/sys/kernel/core_pattern"), core_pattern);
  // Sanity: a legitimate nested path works and comes back.
  ASSERT_TRUE(ex_.put_files(*sb, {{"sub/dir/ok.txt", "ok", 0644}}).ok());
  auto back = ex_.get_files(*sb, {"sub/dir/ok.txt"}, 1024);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ((*back)[0].data, "ok");
  unlink(host_file.c_str());
}

TEST_F(Redteam, Row39_CrossSandboxFiles) {
  pid_t init_a = 0, init_b = 0;
  auto a = Create({}, &init_a);
  auto b = Create({}, &init_b);
  ASSERT_TRUE(a && b);
  const std::string mark = "row39-" + random_hex(16);
  ExpectAllSafe(Exec(*a, {"/probes/row39_cross_sandbox", "write", mark}), 3);
  ExpectAllSafe(Exec(*b, {"/probes/row39_cross_sandbox", "look", mark}), 4);
  // A's files exist (the check above is not vacuous) and B cannot get them.
  auto from_a = ex_.get_files(*a, {"/tmp/row39-secret"}, 1024);
  ASSERT_TRUE(from_a.ok()) << from_a.status().to_string();
  EXPECT_EQ((*from_a)[0].data, mark);
  EXPECT_FALSE(ex_.get_files(*b, {"/tmp/row39-secret"}, 1024).ok());
  EXPECT_FALSE(ex_.get_files(*b, {"/sandbox/row39-secret"}, 1024).ok());
  // Distinct host uids: A's file belongs to A's user, which B's processes are not.
  uid_t a_root = host_uid_of(init_a), b_root = host_uid_of(init_b);
  ASSERT_GE(a_root, kHostIdBase);
  ASSERT_GE(b_root, kHostIdBase);
  EXPECT_NE(a_root, b_root);
  struct stat st;
  ASSERT_EQ(stat(("/proc/" + std::to_string(init_a) + "/root/sandbox/row39-secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, a_root + 1);
  EXPECT_NE(st.st_uid, b_root + 1);
  EXPECT_NE(st.st_uid, b_root);
}

// Partial: there is no server or admission control yet, so this holds many sandboxes and
// runs many execs in parallel through one executor, then checks that nothing leaked.
TEST_F(Redteam, Row40_ManyParallelRequestsLeakNothing) {
  constexpr int kHeld = 64, kThreads = 8, kOneShotsPerThread = 8;
  const int fds0 = count_fds(), mounts0 = count_mounts();
  auto policy = MakePolicy(json::object());
  ASSERT_TRUE(policy.ok());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Sandbox>> held;
  for (int i = 0; i < kHeld; ++i) {
    auto sb = ex_.create(Spec(*policy));
    if (sb.ok()) held.push_back(std::move(sb).value());
    else EXPECT_FALSE(sb.status().message().empty()) << "refused without a reason";
  }
  EXPECT_EQ(held.size(), static_cast<size_t>(kHeld)) << "fewer sandboxes than asked (each refusal must be clear)";
  std::atomic<int> ok{0}, clear_errors{0}, unclear{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < held.size(); i += kThreads) {  // each thread owns its sandboxes
        ExecRequest q;
        q.argv = {"/bin/true"};
        auto r = ex_.exec(*held[i], q);
        if (r.ok() && r->status() == ExecStatus::kOk) ok++;
        else if (!r.ok() ? !r.status().message().empty() : !r->message.empty()) clear_errors++;
        else unclear++;
      }
      for (int j = 0; j < kOneShotsPerThread; ++j) {
        ExecRequest q;
        q.argv = {"/bin/true"};
        auto r = ex_.run_once(Spec(*policy), q);
        if (r.ok() && r->status() == ExecStatus::kOk) ok++;
        else if (!r.ok() ? !r.status().message().empty() : !r->message.empty()) clear_errors++;
        else unclear++;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto& sb : held) ex_.destroy(*sb);
  held.clear();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[   NOTE   ] row 40 (partial, no server yet): " << kHeld << " held sandboxes + "
            << kThreads * kOneShotsPerThread << " parallel one-shots: ok=" << ok << " clear_errors=" << clear_errors
            << " in " << ms << " ms\n";
  EXPECT_EQ(unclear.load(), 0);
  EXPECT_EQ(ok + clear_errors, kHeld + kThreads * kOneShotsPerThread);
  EXPECT_EQ(count_fds(), fds0) << "file descriptors leaked";
  EXPECT_EQ(count_mounts(), mounts0) << "mounts leaked into the host namespace";
  EXPECT_TRUE(eventually(3000, [&] { return sandbox_processes().empty(); })) << "sandbox processes left behind";
}

}  // namespace
}  // namespace corral::redteam
