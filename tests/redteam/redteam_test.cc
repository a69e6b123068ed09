// The red-team suite, part 1: every row of shared/REDTEAM.md that a probe can attempt from
// inside one native sandbox. Each test creates sandboxes with NativeExecutor, runs a probe
// from tests/redteam/probes/ (bind-mounted read-only at /probes) and asserts the safe
// outcome from the probe's "SAFE/UNSAFE rowNN ..." lines and the ExecResult, plus, where the
// row says so, that the host, the supervisor and other sandboxes are unaffected afterwards.
// Copy in/out (row 35), cross-sandbox (39) and request floods (40) are in
// redteam_files_test.cc. Needs root (the native backend writes id maps); skips otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "tests/redteam/redteam_fixture.h"

namespace corral::redteam {
namespace {

namespace fs = std::filesystem;
using runtime::NativeExecutor;

TEST_F(Redteam, Row01_HostFilesAbsent) {
  struct stat st;
  ASSERT_EQ(stat("/etc/shadow", &st), 0) << "the host has no /etc/shadow to protect";
  std::vector<std::string> paths = {CORRAL_SOURCE_DIR, dir_, "/run/corral", "/var/lib/corral"};
  std::string cwd = fs::current_path();
  if (cwd != "/" && std::find(paths.begin(), paths.end(), cwd) == paths.end()) paths.push_back(cwd);
  ExecResult r = RunProbe("row01_host_files", paths);
  ExpectAllSafe(r, 8 + static_cast<int>(paths.size()));
  EXPECT_TRUE(has(r, "SAFE row01 open /etc/shadow:")) << describe(r);
}

TEST_F(Redteam, Row02_ProcSysWrites) {
  std::string core_pattern = read_text("/proc/sys/kernel/core_pattern");
  ExecResult r = RunProbe("row02_proc_write");
  ExpectAllSafe(r, 5);
  EXPECT_EQ(read_text("/proc/sys/kernel/core_pattern"), core_pattern);
}

TEST_F(Redteam, Row03_SensitiveProcAndSys) {
  ExecResult r = RunProbe("row03_proc_read");
  ExpectAllSafe(r, 17);
  EXPECT_TRUE(has(r, "SAFE row03 stat /sys: ENOENT")) << describe(r);
}

TEST_F(Redteam, Row04_ForkBomb) {
  auto sb = Create({{"limits", {{"pids", 32}}}});
  ASSERT_TRUE(sb);
  ExecResult r = Exec(*sb, {"/probes/row04_fork_bomb", "32"});
  ExpectAllSafe(r, 2);
  // The host can still fork and exec, nothing of the bomb is left on it, the sandbox recovered.
  pid_t c = fork();
  if (c == 0) {
    execl("/bin/true", "true", nullptr);
    _exit(127);
  }
  ASSERT_GT(c, 0) << strerror(errno);
  int st = 0;
  waitpid(c, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_TRUE(pids_with_comm("row04_fork_bomb").empty()) << "bomb processes outlived the exec";
  ExpectStillWorks(*sb);
}

TEST_F(Redteam, Row05_Allocate10GiB) {
  const uint64_t limit = 256 * kMiB;
  auto sb = Create({{"limits", {{"memory_bytes", limit}}}});
  ASSERT_TRUE(sb);
  ExecResult r = Exec(*sb, {"/probes/row05_memory", "private", std::to_string(limit)});
  ExpectSafeOrOom(r, 2);
  EXPECT_LE(r.usage.peak_memory_bytes, limit + 32 * kMiB) << describe(r);
  // A program that does not handle the failure (Python's MemoryError) is reported as failed:
  // oom with a cgroup memory limit, nonzero_exit with MemoryError under rlimits.
  if (r.status() == ExecStatus::kOom) {
    // An OOM ends the whole sandbox (memory.oom.group on v2; the same on v1).
    ExecRequest again;
    again.argv = {"/bin/true"};
    EXPECT_FALSE(ex_.exec(*sb, again).ok()) << "the sandbox outlived its OOM";
    sb = Create({{"limits", {{"memory_bytes", limit}}}});
    ASSERT_TRUE(sb);
  }
  if (access("/usr/bin/python3", X_OK) == 0) {
    ExecResult py = Exec(*sb, {"/usr/bin/python3", "-c", "b = bytearray(10 << 30)"});
    bool reported = py.status() == ExecStatus::kOom ||
                    (py.status() == ExecStatus::kNonzeroExit && py.stderr_data.find("MemoryError") != std::string::npos);
    EXPECT_TRUE(reported) << describe(py);
    std::cout << "[   NOTE   ] row 5: probe -> " << exec_status_name(r.status()) << "; python bytearray(10 GiB) -> "
              << exec_status_name(py.status()) << (py.message.empty() ? "" : " (" + py.message + ")") << "\n";
  }
  // The host is fine: a new sandbox runs programs.
  auto again = Create();
  ASSERT_TRUE(again);
  ExpectStillWorks(*again);
}

// RLIMIT_DATA counts private writable mappings only: shared anonymous memory must not
// escape the memory limit.
TEST_F(Redteam, Row05_SharedAnonymousMemoryIsLimited) {
  const uint64_t limit = 64 * kMiB;
  ExecResult r = RunProbe("row05_memory", {"shared", std::to_string(limit)}, {{"limits", {{"memory_bytes", limit}}}});
  ExpectSafeOrOom(r, 1);
}

TEST_F(Redteam, Row05_MemfdIsLimited) {
  const uint64_t limit = 64 * kMiB;
  ExecResult r = RunProbe("row05_memory", {"memfd", std::to_string(limit)},
                          {{"limits", {{"memory_bytes", limit}, {"file_size_bytes", 16 * kMiB}}}});
  ExpectSafeOrOom(r, 1);
}

// memory_bytes is documented as the whole sandbox's; rlimits are per process, so this needs
// the cgroup driver. Skipped (with the measurement) while the backend says it has none.
TEST_F(Redteam, Row05_MemoryLimitCoversWholeSandbox) {
  const uint64_t limit = 64 * kMiB;
  ExecResult r = RunProbe("row05_memory", {"multiproc", std::to_string(limit)}, {{"limits", {{"memory_bytes", limit}}}});
  ProbeReport p = parse_probe(r.stdout_data);
  if (!p.unsafe.empty() && !ex_.features().cgroups) {
    GTEST_SKIP() << "needs the cgroup driver (features().cgroups is false): " << p.unsafe[0];
  }
  ExpectSafeOrOom(r, 1);
}

TEST_F(Redteam, Row06_FillTheDisk) {
  const uint64_t fsize = 8 * kMiB, disk = 32 * kMiB;
  json limits = {{"limits", {{"file_size_bytes", fsize}, {"disk_bytes", disk}}}};
  auto sb = Create(limits);
  ASSERT_TRUE(sb);
  // While the sandbox's disk is full, the host's view of corral's staging directory is empty:
  // everything went to the sandbox's own capped tmpfs, nothing to a host filesystem.
  const std::string staging = "/run/corral/mnt";
  int host_entries = -1;
  ExecResult r = Exec(*sb, {"/probes/row06_disk", std::to_string(fsize), std::to_string(disk)}, [&](ExecRequest& q) {
    q.on_stdout = [&](std::string_view s) {
      if (host_entries < 0 && s.find("fill /tmp") != std::string_view::npos) {
        std::error_code ec;
        host_entries = 0;
        for (auto it = fs::directory_iterator(staging, ec); !ec && it != fs::directory_iterator(); ++it) host_entries++;
      }
    };
  });
  ExpectAllSafe(r, 7);
  EXPECT_EQ(host_entries, 0) << "the sandbox's files are visible in the host's " << staging;
  ExpectStillWorks(*sb);
  // Without SIG_IGN the file size limit is reported as SIGXFSZ.
  auto fresh = Create(limits);
  ASSERT_TRUE(fresh);
  ExecResult x = Exec(*fresh, {"/bin/sh", "-c", "exec head -c 20000000 /dev/zero > /tmp/big"});
  EXPECT_EQ(x.status(), ExecStatus::kSignaled) << describe(x);
  EXPECT_EQ(x.signal, SIGXFSZ) << describe(x);
}

TEST_F(Redteam, Row07_FloodOutput) {
  const uint64_t cap = 1 * kMiB;
  auto sb = Create({{"limits", {{"output_bytes", cap}}}});
  ASSERT_TRUE(sb);
  for (std::string stream : {"stdout", "stderr"}) {
    SCOPED_TRACE(stream);
    long rss0 = rss_kb();
    ExecResult r = Exec(*sb, {"/probes/row07_flood", stream});
    long grown_kb = rss_kb() - rss0;
    const std::string& kept = stream == "stdout" ? r.stdout_data : r.stderr_data;
    const std::string& other = stream == "stdout" ? r.stderr_data : r.stdout_data;
    EXPECT_EQ(r.status(), ExecStatus::kOutputLimit) << describe(r);
    EXPECT_TRUE(stream == "stdout" ? r.stdout_truncated : r.stderr_truncated) << describe(r);
    EXPECT_EQ(kept.size(), cap);
    EXPECT_EQ(other.find("UNSAFE"), std::string::npos) << other;
    EXPECT_LT(grown_kb, 64 * 1024) << "supervisor memory grew by " << grown_kb << " KiB";
    EXPECT_LT(r.usage.wall_ms, 20'000);
    ExpectStillWorks(*sb);
  }
}

TEST_F(Redteam, Row08_SleepOrSpinForever) {
  auto sb = Create();
  ASSERT_TRUE(sb);
  for (std::string mode : {"sleep", "spin", "stubborn"}) {
    SCOPED_TRACE(mode);
    ExecResult r = Exec(*sb, {"/probes/row08_forever", mode}, [](ExecRequest& q) { q.wall_ms = 1000; });
    EXPECT_EQ(r.status(), ExecStatus::kTimeout) << describe(r);
    EXPECT_GE(r.usage.wall_ms, 900);
    EXPECT_LT(r.usage.wall_ms, 3500) << "the timeout took too long to act";
    ExpectAllSafe(Exec(*sb, {"/probes/row08_forever", "count"}), 1);
  }
  EXPECT_TRUE(pids_with_comm("row08_forever").empty()) << "spinners outlived their exec";
  // The CPU budget is enforced too (RLIMIT_CPU), well before the wall clock.
  auto cpu = Create({{"limits", {{"cpu_ms", 1000}}}});
  ASSERT_TRUE(cpu);
  ExecResult r = Exec(*cpu, {"/probes/row08_forever", "spin"}, [](ExecRequest& q) { q.wall_ms = 20'000; });
  EXPECT_EQ(r.status(), ExecStatus::kTimeout) << describe(r);
  EXPECT_LT(r.usage.wall_ms, 10'000) << describe(r);
}

TEST_F(Redteam, Row09_DaemonDiesWithTheExec) {
  for (std::string mode : {"detach", "hold"}) {
    SCOPED_TRACE(mode);
    auto sb = Create();
    ASSERT_TRUE(sb);
    bool seen_on_host = false;
    ExecResult r = Exec(*sb, {"/probes/row09_daemon", mode}, [&](ExecRequest& q) {
      q.wall_ms = 30'000;
      q.on_stdout = [&](std::string_view s) {
        if (s.find("daemon-started") != std::string_view::npos) seen_on_host = !pids_with_comm("crl-row09-dmn").empty();
      };
    });
    ExpectAllSafe(r, 1);
    EXPECT_TRUE(seen_on_host) << "the daemon was never seen on the host while it ran: nothing was tested";
    EXPECT_LT(r.usage.wall_ms, 10'000) << "a daemon holding the output pipe delayed the exec";
    EXPECT_TRUE(pids_with_comm("crl-row09-dmn").empty()) << "the daemon outlived its exec";
    ExpectAllSafe(Exec(*sb, {"/probes/row09_daemon", "check"}), 1);
  }
}

TEST_F(Redteam, Row10_KillTheSupervisor) {
  pid_t init = 0;
  auto sb = Create({}, &init);
  ASSERT_TRUE(sb);
  ASSERT_GT(init, 0);
  ExecResult r = Exec(*sb, {"/probes/row10_kill_supervisor", "attack", std::to_string(getpid())});
  ExpectAllSafe(r, 6);
  EXPECT_TRUE(alive(init)) << "corral-init died";
  ExpectStillWorks(*sb);
}

// "sandbox dies if supervisor dies": a forked supervisor runs a sleeper, then is SIGKILLed.
TEST_F(Redteam, Row10_SandboxDiesWithSupervisor) {
  auto policy = MakePolicy(json::object());
  ASSERT_TRUE(policy.ok());
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  pid_t sup = fork();
  ASSERT_GE(sup, 0);
  if (sup == 0) {
    close(p[0]);
    NativeExecutor ex;
    // Zygote mode: supervisor -> template -> init; killing the supervisor must still end it.
    pid_t parent = getpid();
    if (zygote_mode()) {
      if (!ex.start_zygote(runtime::ZygoteOptions{.preload = {"json"}, .warmup = ""}).ok()) _exit(4);
      parent = ex.zygote_info()["python"]["pid"].get<pid_t>();
    }
    auto sb = ex.create(Spec(*policy));
    if (!sb.ok()) _exit(2);
    std::vector<pid_t> kids = children_of(parent);
    std::string msg = std::to_string(kids.empty() ? 0 : kids[0]) + "\n";
    ExecRequest q;
    q.argv = {"/probes/row10_kill_supervisor", "sleep"};
    q.wall_ms = 120'000;
    q.on_stdout = [&](std::string_view s) {
      if (s.find("started") != std::string_view::npos && write(p[1], msg.data(), msg.size()) < 0) _exit(3);
    };
    (void)ex.exec(**sb, q);
    _exit(0);
  }
  close(p[1]);
  struct pollfd pf = {p[0], POLLIN, 0};
  char buf[32] = {};
  ASSERT_EQ(poll(&pf, 1, 20'000), 1) << "the forked supervisor never started its sleeper";
  ASSERT_GT(read(p[0], buf, sizeof buf - 1), 0);
  close(p[0]);
  pid_t init = atoi(buf);
  std::vector<pid_t> sleepers = pids_with_comm("crl-row10-slp");
  ASSERT_GT(init, 0);
  ASSERT_TRUE(alive(init));
  ASSERT_EQ(sleepers.size(), 1u);
  kill(sup, SIGKILL);
  waitpid(sup, nullptr, 0);
  EXPECT_TRUE(eventually(5000, [&] { return !alive(init) && !alive(sleepers[0]); }))
      << "sandbox outlived its supervisor: init " << init << (alive(init) ? " alive" : " gone") << ", sleeper "
      << sleepers[0] << (alive(sleepers[0]) ? " alive" : " gone");
}

std::vector<std::string> host_addresses() {
  std::vector<std::string> out;
  struct ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return out;
  for (auto* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr || !strcmp(i->ifa_name, "lo")) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      auto* a = &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(a)) continue;
      inet_ntop(AF_INET6, a, buf, sizeof buf);
    }
    if (buf[0]) out.push_back(buf);
  }
  freeifaddrs(ifs);
  return out;
}

TEST_F(Redteam, Row11_NoInternetOrLan) {
  std::vector<std::string> addrs = host_addresses();
  for (std::string mode : {"loopback", "none"}) {
    SCOPED_TRACE(mode);
    ExecResult r = RunProbe("row11_network", addrs, {{"network", {{"mode", mode}}}});
    ExpectAllSafe(r, 9 + 2 * static_cast<int>(addrs.size()));
  }
}

TEST_F(Redteam, Row12_HostLoopbackAndAbstractSockets) {
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in a4 = {};
  a4.sin_family = AF_INET;
  a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a4;
  ASSERT_EQ(bind(tcp, reinterpret_cast<sockaddr*>(&a4), sizeof a4), 0);
  ASSERT_EQ(listen(tcp, 8), 0);
  ASSERT_EQ(getsockname(tcp, reinterpret_cast<sockaddr*>(&a4), &len), 0);
  const int port = ntohs(a4.sin_port);
  int tcp6 = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in6 a6 = {};
  a6.sin6_family = AF_INET6;
  a6.sin6_addr = in6addr_loopback;
  a6.sin6_port = htons(port);
  if (bind(tcp6, reinterpret_cast<sockaddr*>(&a6), sizeof a6) != 0 || listen(tcp6, 8) != 0) {
    close(tcp6);
    tcp6 = -1;
  }
  const std::string abstract_name = "corral-redteam-" + std::to_string(getpid()) + "-" + random_hex(6);
  int abs = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un au = {};
  au.sun_family = AF_UNIX;
  memcpy(au.sun_path + 1, abstract_name.data(), abstract_name.size());
  socklen_t au_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract_name.size());
  ASSERT_EQ(bind(abs, reinterpret_cast<sockaddr*>(&au), au_len), 0);
  ASSERT_EQ(listen(abs, 8), 0);
  const std::string path = "/tmp/corral-redteam-" + std::to_string(getpid()) + ".sock";
  unlink(path.c_str());
  int ps = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un pu = {};
  pu.sun_family = AF_UNIX;
  snprintf(pu.sun_path, sizeof pu.sun_path, "%s", path.c_str());
  ASSERT_EQ(bind(ps, reinterpret_cast<sockaddr*>(&pu), sizeof pu), 0);
  ASSERT_EQ(listen(ps, 8), 0);

  for (std::string mode : {"loopback", "none"}) {
    SCOPED_TRACE(mode);
    ExecResult r = RunProbe("row12_localhost", {std::to_string(port), abstract_name, path}, {{"network", {{"mode", mode}}}});
    ExpectAllSafe(r, 4);
  }
  // No connection reached any host listener...
  for (int fd : {tcp, tcp6, abs, ps}) {
    if (fd < 0) continue;
    errno = 0;
    int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_EQ(c, -1) << "a connection from the sandbox arrived at a host listener";
    EXPECT_EQ(errno, EAGAIN);
    if (c >= 0) close(c);
  }
  // ...although each was reachable from the host itself.
  int c4 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(connect(c4, reinterpret_cast<sockaddr*>(&a4), sizeof a4), 0) << strerror(errno);
  int ca = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(connect(ca, reinterpret_cast<sockaddr*>(&au), au_len), 0) << strerror(errno);
  for (int fd : {c4, ca, tcp, tcp6, abs, ps}) {
    if (fd >= 0) close(fd);
  }
  unlink(path.c_str());
}

TEST_F(Redteam, Row13_NoControlSockets) {
  struct stat st;
  ASSERT_EQ(stat("/run/corral", &st), 0) << "corral's state dir should exist on the host by now";
  std::vector<std::string> extra = {"/run/corral/uids", "/run/corral/mnt", "/var/lib/corral/rootfs"};
  ExecResult r = RunProbe("row13_sockets", extra);
  ExpectAllSafe(r, 15 + static_cast<int>(extra.size()));
}

TEST_F(Redteam, Row14_PtraceSupervisorOrOtherSandbox) {
  pid_t other_init = 0;
  auto other = Create({}, &other_init);
  ASSERT_TRUE(other);
  ASSERT_GT(other_init, 0);
  ExecResult r = RunProbe("row14_ptrace", {std::to_string(getpid()), std::to_string(other_init)});
  ExpectAllSafe(r, 10 + 2 * 4);
  EXPECT_TRUE(alive(other_init));
  ExpectStillWorks(*other);
}

TEST_F(Redteam, Row15_KillMinusOne) {
  pid_t init = 0;
  auto sb = Create({}, &init);
  ASSERT_TRUE(sb);
  uid_t root_host = host_uid_of(init);
  ASSERT_GE(root_host, kHostIdBase);
  // Canaries: one with the very uid the sandbox's user has on the host, one nobody, one root.
  auto canary = [](uid_t uid) {
    pid_t p = fork();
    if (p == 0) {
      if (uid != 0 && (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0)) _exit(1);
      for (;;) pause();
    }
    return p;
  };
  std::vector<pid_t> canaries = {canary(root_host + 1), canary(65534), canary(0)};
  for (pid_t c : canaries) ASSERT_TRUE(eventually(2000, [&] { return alive(c); }));
  ASSERT_TRUE(eventually(2000, [&] { return host_uid_of(canaries[0]) == root_host + 1; }));
  ExecResult r = Exec(*sb, {"/probes/row15_kill_all"});
  ExpectAllSafe(r, 2);
  for (pid_t c : canaries) {
    EXPECT_TRUE(alive(c)) << "host canary " << c << " (uid " << host_uid_of(c) << ") was killed";
    EXPECT_EQ(waitpid(c, nullptr, WNOHANG), 0);
  }
  EXPECT_TRUE(alive(init));
  ExpectStillWorks(*sb);
  for (pid_t c : canaries) {
    kill(c, SIGKILL);
    waitpid(c, nullptr, 0);
  }
}

TEST_F(Redteam, Row16_Tiocsti) { ExpectAllSafe(RunProbe("row16_tiocsti"), 10); }

TEST_F(Redteam, Row17_RuntimeBinaryNotWritable) {
  struct stat before, after;
  ASSERT_EQ(stat("/proc/self/exe", &before), 0);
  ExecResult r = RunProbe("row17_proc_exe");
  ExpectAllSafe(r, 8);
  ASSERT_EQ(stat("/proc/self/exe", &after), 0);
  EXPECT_EQ(before.st_size, after.st_size);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

TEST_F(Redteam, Row18_LeakedHostFdsAndCwd) {
  // Host fds without O_CLOEXEC, open while the sandbox is created and runs.
  int shadow = open("/etc/shadow", O_RDONLY);
  int root = open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(shadow, 0);
  ASSERT_GE(root, 0);
  int high = dup2(root, 200);
  pid_t init = 0;
  auto sb = Create({}, &init);
  ASSERT_TRUE(sb);
  ExpectAllSafe(Exec(*sb, {"/probes/row18_fds_cwd"}), 8);
  // corral-init itself holds none of them.
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(init) + "/fd", ec); !ec && it != fs::directory_iterator();
       ++it) {
    std::string target = fs::read_symlink(it->path(), ec).string();
    EXPECT_NE(target, "/etc/shadow") << "init holds a host fd: " << it->path();
    EXPECT_NE(target, "/") << "init holds a host fd: " << it->path();
  }
  // cwd values that point at fds or other processes: refused, or they land inside the sandbox.
  for (std::string cwd : {"/proc/self/fd/3", "/proc/self/fd/200", "/proc/1/cwd", "/proc/1/root", "/../../.."}) {
    SCOPED_TRACE("cwd " + cwd);
    ExecResult r = Exec(*sb, {"/probes/row18_fds_cwd"}, [&](ExecRequest& q) { q.cwd = cwd; });
    std::cout << "[   NOTE   ] row 18: cwd " << cwd << " -> " << exec_status_name(r.status())
              << (r.message.empty() ? "" : " (" + r.message + ")") << "\n";
    if (r.status() == ExecStatus::kSetupError) continue;
    ExpectAllSafe(r, 8);
  }
  close(shadow);
  close(root);
  close(high);
}

TEST_F(Redteam, Row19_UnshareAndCloneNamespaces) {
  ExecResult r = RunProbe("row19_namespaces");
  ExpectAllSafe(r, 25);
  EXPECT_TRUE(has(r, "SAFE row19 unshare(CLONE_NEWUSER): EPERM")) << describe(r);
}

TEST_F(Redteam, Row20_MountApis) { ExpectAllSafe(RunProbe("row20_mount"), 12); }

TEST_F(Redteam, Row21_Setns) { ExpectAllSafe(RunProbe("row21_setns"), 12); }

TEST_F(Redteam, Row22_ChrootEscape) { ExpectAllSafe(RunProbe("row22_chroot"), 6); }

TEST_F(Redteam, Row23_Mknod) { ExpectAllSafe(RunProbe("row23_mknod"), 18); }

TEST_F(Redteam, Row24_KernelModules) { ExpectAllSafe(RunProbe("row24_modules"), 9); }

TEST_F(Redteam, Row25_Keyrings) { ExpectAllSafe(RunProbe("row25_keyring"), 6); }

TEST_F(Redteam, Row26_BpfPerfUserfaultfdIoUring) { ExpectAllSafe(RunProbe("row26_kernel_surface"), 9); }

TEST_F(Redteam, Row27_ForeignSyscallAbis) {
  auto sb = Create();
  ASSERT_TRUE(sb);
  struct Case {
    const char* probe;
    const char* name;
  };
  for (Case c : {Case{"row27_i386", "getpid"}, Case{"row27_x32", "x32:getpid"}}) {
    SCOPED_TRACE(c.probe);
    ExecResult r = Exec(*sb, {std::string("/probes/") + c.probe});
    EXPECT_EQ(r.status(), ExecStatus::kSeccompViolation) << describe(r);
    EXPECT_NE(r.message.find(c.name), std::string::npos) << "message does not name " << c.name << ": " << r.message;
    EXPECT_EQ(r.signal, SIGKILL) << describe(r);
    EXPECT_TRUE(has(r, "NOTE row27 about to issue")) << "the probe never reached the call\n" << describe(r);
    EXPECT_FALSE(has(r, "UNSAFE")) << describe(r);
    ExpectStillWorks(*sb);
  }
}

TEST_F(Redteam, Row28_SetuidAndFileCapBinaries) {
  // Next to the probes, not in /tmp: the probe needs a filesystem that honours setuid on the
  // host, and /tmp may be mounted nosuid (it is in tools/vm-test's guest). A mount of its own
  // would not do: a zygote's sandboxes see the host's mounts as they were when it started.
  std::string tmpl = dir_ + "/rt28-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << strerror(errno);
  const std::string dir = tmpl;
  chmod(dir.c_str(), 0755);
  struct Remove {
    std::string d;
    ~Remove() { fs::remove_all(d); }
  } remove{dir};
  const std::string src = dir_ + "/row28_setuid_exec";
  for (const char* name : {"suid_hostroot", "suid_sbxroot", "fcap"}) {
    fs::copy_file(src, dir + "/" + name, fs::copy_options::overwrite_existing);
  }
  pid_t init = 0;
  auto sb = Create({{"mounts", json::array({{{"type", "bind"}, {"source", dir}, {"target", "/suid"}, {"readonly", true}}})}},
                   &init);
  ASSERT_TRUE(sb);
  uid_t sbx_root = host_uid_of(init);
  ASSERT_GE(sbx_root, kHostIdBase);
  // setuid-root on the host, setuid to the sandbox's own root (uid 0 inside), and file caps.
  ASSERT_EQ(chown((dir + "/suid_hostroot").c_str(), 0, 0), 0);
  ASSERT_EQ(chmod((dir + "/suid_hostroot").c_str(), 04755), 0);
  ASSERT_EQ(chown((dir + "/suid_sbxroot").c_str(), sbx_root, sbx_root), 0);
  ASSERT_EQ(chmod((dir + "/suid_sbxroot").c_str(), 04755), 0);
  cap_t caps = cap_from_text("cap_setuid,cap_sys_admin=ep");
  ASSERT_NE(caps, nullptr);
  ASSERT_EQ(cap_set_file((dir + "/fcap").c_str(), caps), 0) << strerror(errno);
  cap_free(caps);
  // The setuid helper really works on the host: a nobody process gets euid 0 from it.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t c = fork();
  if (c == 0) {
    dup2(p[1], 1);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    execl((dir + "/suid_hostroot").c_str(), "suid_hostroot", "whoami", nullptr);
    _exit(127);
  }
  close(p[1]);
  char out[128] = {};
  ASSERT_GT(read(p[0], out, sizeof out - 1), 0);
  close(p[0]);
  waitpid(c, nullptr, 0);
  if (std::string(out).rfind("ids 65534 0 0", 0) != 0) {
    GTEST_SKIP() << "this filesystem does not honour setuid on the host (" << out
                 << "), so the probe could not tell a safe sandbox from an unsafe one";
  }

  ExecResult r = Exec(*sb, {"/probes/row28_setuid_exec", "/suid/suid_hostroot", "/suid/suid_sbxroot", "/suid/fcap"});
  ExpectAllSafe(r, 2 + 3);
  ex_.destroy(*sb);
}

TEST_F(Redteam, Row29_SetuidZeroAndUidMap) {
  pid_t init = 0;
  auto sb = Create({}, &init);
  ASSERT_TRUE(sb);
  ExpectAllSafe(Exec(*sb, {"/probes/row29_uid_map"}), 11);
  // The host's view of the map: nothing maps to host root or a low id.
  for (const char* map : {"uid_map", "gid_map"}) {
    std::istringstream in(read_text("/proc/" + std::to_string(init) + "/" + map));
    unsigned inside, host, count;
    int lines = 0;
    while (in >> inside >> host >> count) {
      lines++;
      EXPECT_GE(host, kHostIdBase) << map << ": " << inside << " -> host " << host;
      EXPECT_EQ(count, 1u) << map;
    }
    EXPECT_GT(lines, 0) << map;
  }
}

TEST_F(Redteam, Row30_OnlyAllowlistedEnvironment) {
  const std::string secret = "corral-secret-" + random_hex(24);
  setenv("CORRAL_TEST_SECRET", secret.c_str(), 1);
  setenv("CORRAL_TEST_ALLOWED", "visible-value", 1);
  auto sb = Create({{"env_passthrough", json::array({"CORRAL_TEST_ALLOWED"})}});
  ASSERT_TRUE(sb);
  ExecResult r = Exec(*sb,
                      {"/probes/row30_environment", "env", "PATH", "HOME", "LANG", "USER", "LOGNAME", "TMPDIR",
                       "CORRAL_TEST_ALLOWED", "REQ_VAR"},
                      [](ExecRequest& q) { q.env["REQ_VAR"] = "from-request"; });
  unsetenv("CORRAL_TEST_SECRET");
  unsetenv("CORRAL_TEST_ALLOWED");
  ExpectAllSafe(r, 1);
  EXPECT_EQ(r.stdout_data.find(secret), std::string::npos) << "the host secret leaked into the sandbox";
  // The probe does see what the policy passes through: the check above is not vacuous.
  EXPECT_TRUE(has(r, "env CORRAL_TEST_ALLOWED=visible-value")) << describe(r);
  EXPECT_TRUE(has(r, "env REQ_VAR=from-request")) << describe(r);
}

// corral-init is a clone of the supervisor: its /proc/1/environ and /proc/1/cmdline are the
// supervisor's (a token passed as `corral serve --token ...` would be readable).
TEST_F(Redteam, Row30_SupervisorEnvironAndCmdlineHidden) {
  std::string cmdline = read_text("/proc/self/cmdline");
  std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
  ASSERT_FALSE(argv0.empty());
  ExecResult r = RunProbe("row30_environment", {"proc"});
  ExpectAllSafe(r, 2);
  EXPECT_EQ(r.stdout_data.find(argv0), std::string::npos) << "the supervisor's command line is readable inside";
}

TEST_F(Redteam, Row31_SetClocks) {
  auto offset = [] {
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return (rt.tv_sec - mono.tv_sec) + (rt.tv_nsec - mono.tv_nsec) / 1e9;
  };
  double before = offset();
  ExpectAllSafe(RunProbe("row31_clock"), 4);
  EXPECT_NEAR(offset(), before, 0.5) << "the host clock moved";
}

TEST_F(Redteam, Row32_Hostname) {
  char before[256] = {}, after[256] = {};
  ASSERT_EQ(gethostname(before, sizeof before), 0);
  ExecResult r = RunProbe("row32_hostname", {"rt-row32"}, {{"hostname", "rt-row32"}});
  ExpectAllSafe(r, 4);
  ASSERT_EQ(gethostname(after, sizeof after), 0);
  EXPECT_STREQ(before, after);
}

TEST_F(Redteam, Row33_SysvIpcAndMqueue) {
  const key_t base = static_cast<key_t>(0x52540000 | ((getpid() & 0xfff) << 4));
  const key_t shm_key = base + 1, msg_key = base + 2, sem_key = base + 3, own_key = base + 4;
  const std::string host_mq = "/corral-rt33-host-" + std::to_string(getpid());
  const std::string own_mq = "/corral-rt33-own-" + std::to_string(getpid());
  int shm = shmget(shm_key, 4096, IPC_CREAT | 0666);
  int msg = msgget(msg_key, IPC_CREAT | 0666);
  int sem = semget(sem_key, 1, IPC_CREAT | 0666);
  struct mq_attr a = {};
  a.mq_maxmsg = 1;
  a.mq_msgsize = 16;
  mqd_t mq = mq_open(host_mq.c_str(), O_CREAT | O_RDWR, 0666, &a);
  ASSERT_GE(shm, 0);
  ASSERT_GE(msg, 0);
  ASSERT_GE(sem, 0);
  ASSERT_NE(mq, static_cast<mqd_t>(-1)) << strerror(errno);
  auto hex = [](key_t k) {
    char b[16];
    snprintf(b, sizeof b, "%#x", static_cast<unsigned>(k));
    return std::string(b);
  };
  auto sb = Create();
  ASSERT_TRUE(sb);
  ExecResult r = Exec(*sb, {"/probes/row33_ipc", hex(shm_key), hex(msg_key), hex(sem_key), host_mq, hex(own_key), own_mq});
  ExpectAllSafe(r, 5);
  EXPECT_TRUE(has(r, "NOTE row33 created shm key")) << describe(r);
  // What the sandbox created stays in its IPC namespace.
  errno = 0;
  EXPECT_EQ(shmget(own_key, 0, 0), -1) << "the sandbox's shm segment is visible on the host";
  EXPECT_EQ(errno, ENOENT);
  mqd_t own = mq_open(own_mq.c_str(), O_RDONLY);
  EXPECT_EQ(own, static_cast<mqd_t>(-1)) << "the sandbox's mqueue is visible on the host";
  if (own != static_cast<mqd_t>(-1)) {
    mq_close(own);
    mq_unlink(own_mq.c_str());
  }
  shmctl(shm, IPC_RMID, nullptr);
  msgctl(msg, IPC_RMID, nullptr);
  semctl(sem, 0, IPC_RMID);
  mq_close(mq);
  mq_unlink(host_mq.c_str());
}

TEST_F(Redteam, Row34_Cgroups) { ExpectAllSafe(RunProbe("row34_cgroup"), 7); }

TEST_F(Redteam, Row36_Personality) { ExpectAllSafe(RunProbe("row36_personality"), 6); }

TEST_F(Redteam, Row37_OpenByHandleAt) { ExpectAllSafe(RunProbe("row37_handles"), 3); }

TEST_F(Redteam, Row38_RawAndExoticSockets) { ExpectAllSafe(RunProbe("row38_socket_families"), 18); }

}  // namespace
}  // namespace corral::redteam
