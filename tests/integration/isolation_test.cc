// Every isolation step of the native launcher, verified from inside the sandbox.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

std::string field(const std::string& status, const std::string& name) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      std::string v = line.substr(name.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "<missing>";
}

// mountinfo -> {mount point: "options - fstype source superoptions"}.
std::map<std::string, std::string> mount_points(const std::string& mountinfo) {
  std::map<std::string, std::string> out;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, dev, root, point, opts;
    f >> id >> parent >> dev >> root >> point >> opts;
    auto dash = line.find(" - ");
    out[point] = opts + " -" + (dash == std::string::npos ? "" : line.substr(dash + 2));
  }
  return out;
}

using Isolation = SandboxTest;

TEST_F(Isolation, UserNamespaceMapsToUnprivilegedHostIds) {
  ExecResult r = sh("id -u; id -g; cat /proc/self/uid_map; cat /proc/self/gid_map; cat /proc/self/setgroups");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  std::istringstream in(r.stdout_data);
  std::string uid, gid;
  in >> uid >> gid;
  EXPECT_EQ(uid, "1000");
  EXPECT_EQ(gid, "1000");
  // Two lines each: sandbox 0 and 1000, both mapped to host ids far above real users.
  unsigned long inside, host, count;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(in >> inside >> host >> count) << r.stdout_data;
    EXPECT_GE(host, 1ul << 30) << "sandbox id " << inside << " maps to a low host id";
    EXPECT_EQ(count, 1u);
  }
  std::string setgroups;
  in >> setgroups;
  EXPECT_EQ(setgroups, "deny");
}

TEST_F(Isolation, ProcessRunsAsPid2UnderCorralInit) {
  ExecResult r = sh("echo $$; ls /proc | grep -c '^[0-9]'");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  std::istringstream in(r.stdout_data);
  std::string pid, nprocs;
  in >> pid >> nprocs;
  EXPECT_EQ(pid, "2");
  // Only init, this shell and its children (ls, grep) are visible.
  EXPECT_LE(std::stoi(nprocs), 4) << r.stdout_data;
}

TEST_F(Isolation, CapabilitiesAllZeroAndNoNewPrivs) {
  ExecResult r = run({"/bin/cat", "/proc/self/status"});
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(field(r.stdout_data, set), "0000000000000000") << set;
  }
  EXPECT_EQ(field(r.stdout_data, "NoNewPrivs"), "1");
  EXPECT_EQ(field(r.stdout_data, "Seccomp"), "2");
  EXPECT_EQ(field(r.stdout_data, "Groups"), "");
}

TEST_F(Isolation, HostnameIsTheSandboxes) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ExecResult r = run({"/bin/hostname"}, policy(R"({"hostname": "box-42"})"));
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "box-42\n");
  char after[256] = {};
  gethostname(after, sizeof after - 1);
  EXPECT_STREQ(host, after);
}

TEST_F(Isolation, NetworkHasOnlyLoopback) {
  ExecResult r = py(
      "import socket\n"
      "print(sorted(n for _, n in socket.if_nameindex()))\n"
      "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
      "socket.create_connection(s.getsockname(), timeout=2); print('lo-ok')\n"
      "try:\n"
      "    socket.create_connection(('192.0.2.1', 80), timeout=2); print('OUT')\n"
      "except OSError as e: print('blocked', e.errno)\n");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_NE(r.stdout_data.find("['lo']"), std::string::npos) << r.stdout_data;
  EXPECT_NE(r.stdout_data.find("lo-ok"), std::string::npos);
  EXPECT_NE(r.stdout_data.find("blocked 101"), std::string::npos) << r.stdout_data;  // ENETUNREACH
}

TEST_F(Isolation, NetworkNoneLeavesLoopbackDown) {
  ExecResult r = py("import socket\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen()\n"
                    "try:\n socket.create_connection(s.getsockname(), timeout=2); print('connected')\n"
                    "except OSError as e: print('err', e.errno)",
                    policy(R"({"network": {"mode": "none"}})"));
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "err 101\n");  // ENETUNREACH: lo is down
}

// /dev: the nodes programs expect and nothing else, read-only, the devices usable, a pty of
// the sandbox's own devpts, a writable /dev/shm.
TEST_F(Isolation, DevIsMinimalAndReadOnly) {
  ExecResult m = run({"/bin/cat", "/proc/self/mountinfo"});
  auto points = mount_points(m.stdout_data);
  // The prepared /dev (bound read-only, from whatever filesystem holds the rootfs store), or a
  // tmpfs built per sandbox where that store is nodev (read-write, owned by sandbox root: the
  // sandbox user cannot write it either).
  const bool prepared = points["/dev"].rfind("ro,", 0) == 0;
  if (prepared) EXPECT_EQ(points["/dev"].rfind("ro,nosuid,noexec", 0), 0u) << points["/dev"];
  else EXPECT_NE(points["/dev"].find("- tmpfs"), std::string::npos) << points["/dev"];
  ExecResult r = run({"/usr/bin/python3", "-c",
                      "import os, errno\n"
                      "print(sorted(os.listdir('/dev')))\n"
                      "open('/dev/null', 'w').write('x'); print(len(open('/dev/urandom', 'rb').read(8)))\n"
                      "print(open('/dev/zero', 'rb').read(2) == bytes(2))\n"
                      "try: open('/dev/new', 'w')\n"
                      "except OSError as e: print(errno.errorcode[e.errno])\n"
                      "m, s = os.openpty(); print(os.ttyname(s))\n"
                      "open('/dev/shm/x', 'w').write('y'); print(open('/dev/shm/x').read())\n"});
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data,
            "['fd', 'full', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', "
            "'zero']\n8\nTrue\n" + std::string(prepared ? "EROFS" : "EACCES") + "\n/dev/pts/0\ny\n");
}

TEST_F(Isolation, MountsAreTheSandboxesOwn) {
  ExecResult r = run({"/bin/cat", "/proc/self/mountinfo"});
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  auto m = mount_points(r.stdout_data);
  ASSERT_TRUE(m.count("/")) << r.stdout_data;
  EXPECT_NE(m["/"].find("- overlay"), std::string::npos) << m["/"];
  EXPECT_EQ(m["/proc"].rfind("rw,nosuid,nodev,noexec", 0), 0u) << m["/proc"];
  EXPECT_EQ(m["/usr"].rfind("ro,nosuid,nodev", 0), 0u) << m["/usr"];
  EXPECT_EQ(m["/proc/sys"].rfind("ro,", 0), 0u) << m["/proc/sys"];
  EXPECT_TRUE(m.count("/dev/pts"));
  EXPECT_TRUE(m.count("/tmp"));
  EXPECT_FALSE(m.count("/sys"));
  for (const auto& [point, opts] : m) {
    EXPECT_EQ(point.find("/work"), std::string::npos) << "host checkout mounted at " << point;
  }
  ExecResult paths = sh("for p in /etc/shadow /root/.bashrc /work /home/root /run/corral /sys/firmware "
                        "/var/run/docker.sock; do [ -e $p ] && echo PRESENT $p; done; echo end");
  EXPECT_EQ(paths.stdout_data, "end\n");
}

TEST_F(Isolation, ProcSensitiveFilesMaskedOrAbsent) {
  // Each is either absent on this kernel or reads as empty; none is writable.
  ExecResult r = sh("for f in kcore keys timer_list sched_debug kallsyms kpageflags; do "
                    "  [ -e /proc/$f ] && echo $f $(wc -c < /proc/$f); done; "
                    "for f in /proc/sysrq-trigger /proc/sys/kernel/core_pattern /proc/sys/kernel/hostname; do "
                    "  (echo x > $f) 2>/dev/null && echo WROTE $f; done; echo end");
  std::istringstream in(r.stdout_data);
  std::string line;
  int masked = 0;
  while (std::getline(in, line)) {
    if (line == "end") continue;
    EXPECT_EQ(line.substr(line.find(' ') + 1), "0") << line;
    ++masked;
  }
  EXPECT_GE(masked, 2) << r.stdout_data;  // keys and timer_list exist on every kernel
  EXPECT_NE(r.stdout_data.find("end"), std::string::npos);
  EXPECT_EQ(r.stdout_data.find("WROTE"), std::string::npos) << r.stdout_data;
}

TEST_F(Isolation, WritableLayerAndTmpButNotUsr) {
  ExecResult r = sh("echo a > /sandbox/f && cat /sandbox/f; echo b > /tmp/g && cat /tmp/g; "
                    "touch /usr/bin/evil 2>/dev/null && echo USR-WRITABLE; pwd; ls -ld /tmp | cut -c1-10");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "a\nb\n/sandbox\ndrwxrwxrwt\n");
}

TEST_F(Isolation, DiskIsCappedByTheStagingTmpfs) {
  ExecResult r = sh("dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; echo; dd if=/dev/zero of=/sandbox/f bs=1M "
                    "count=64 2>&1",
                    policy(R"({"limits": {"disk_bytes": 8388608, "file_size_bytes": 1073741824}})"));
  EXPECT_NE(r.stdout_data.find("No space left"), std::string::npos) << r.stdout_data;
  EXPECT_EQ(r.stdout_data.find("67108864 bytes"), std::string::npos) << r.stdout_data;
}

TEST_F(Isolation, FileSizeLimitStopsLargeWrites) {
  ExecResult r = py("f = open('/tmp/x', 'wb')\ntry:\n f.write(b'a' * 3000000); f.flush()\nexcept OSError as e: print('err', e.errno)",
                    policy(R"({"limits": {"file_size_bytes": 1048576}})"));
  EXPECT_EQ(r.stdout_data, "err 27\n") << r.stderr_data;  // EFBIG (SIGXFSZ is ignored by python)
}

TEST_F(Isolation, InheritedFdsAreClosed) {
  int leak = open("/etc/hostname", O_RDONLY);  // deliberately not O_CLOEXEC
  ASSERT_GE(leak, 0);
  ExecResult r = sh("ls /proc/self/fd | sort -n | tr '\\n' ' '");
  close(leak);
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  // 0-2 and the fd ls itself opens for the listing (3).
  EXPECT_EQ(r.stdout_data, "0 1 2 3 ");
}

TEST_F(Isolation, EnvironmentIsRebuiltFromTheAllowlist) {
  setenv("CORRAL_TEST_SECRET", "hunter2", 1);
  setenv("CORRAL_TEST_ALLOWED", "visible", 1);
  ExecResult r = run({"/usr/bin/env"}, policy(R"({"env": {"GREETING": "hi"}, "env_passthrough": ["CORRAL_TEST_ALLOWED"]})"));
  unsetenv("CORRAL_TEST_SECRET");
  unsetenv("CORRAL_TEST_ALLOWED");
  ASSERT_EQ(r.status(), ExecStatus::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data.find("hunter2"), std::string::npos);
  EXPECT_NE(r.stdout_data.find("CORRAL_TEST_ALLOWED=visible"), std::string::npos);
  EXPECT_NE(r.stdout_data.find("GREETING=hi"), std::string::npos);
  EXPECT_NE(r.stdout_data.find("HOME=/sandbox"), std::string::npos);
}

TEST_F(Isolation, NamespacesDifferFromTheHostsAndEachOthers) {
  const char* kinds[] = {"ipc", "uts", "net", "pid", "mnt", "user", "cgroup"};
  std::string script;
  for (const char* k : kinds) script += std::string("readlink /proc/self/ns/") + k + ";";
  // Both sandboxes alive at once: the kernel reuses a freed namespace's inode number.
  auto sa = executor_.create(SandboxSpec{});
  auto sb = executor_.create(SandboxSpec{});
  ASSERT_TRUE(sa.ok() && sb.ok());
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", script};
  ExecResult a = *executor_.exec(**sa, req);
  ExecResult b = *executor_.exec(**sb, req);
  executor_.destroy(**sa);
  executor_.destroy(**sb);
  ASSERT_EQ(a.status(), ExecStatus::kOk) << a.stderr_data;
  std::istringstream ia(a.stdout_data), ib(b.stdout_data);
  for (const char* k : kinds) {
    std::string la, lb;
    std::getline(ia, la);
    std::getline(ib, lb);
    char host[64] = {};
    ASSERT_GT(readlink((std::string("/proc/self/ns/") + k).c_str(), host, sizeof host - 1), 0);
    EXPECT_NE(la, host) << k;
    EXPECT_NE(la, lb) << k;
  }
}

TEST_F(Isolation, InitCarriesNoSupervisorArgumentsOrEnvironment) {
  setenv("CORRAL_TEST_TOKEN", "s3cret-token", 1);
  auto sb = executor_.create(SandboxSpec{});
  unsetenv("CORRAL_TEST_TOKEN");
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  // corral-init is this process's only child while the sandbox idles.
  std::string cmdline = "<no init found>", environ_text;
  for (pid_t pid : children_of(getpid())) {
    std::ifstream c("/proc/" + std::to_string(pid) + "/cmdline"), e("/proc/" + std::to_string(pid) + "/environ");
    cmdline.assign(std::istreambuf_iterator<char>(c), {});
    environ_text.assign(std::istreambuf_iterator<char>(e), {});
  }
  executor_.destroy(**sb);
  EXPECT_EQ(cmdline.find("integration_tests"), std::string::npos) << cmdline;
  EXPECT_EQ(cmdline.find_first_not_of('\0'), std::string::npos) << "cmdline not scrubbed: " << cmdline;
  EXPECT_EQ(environ_text.find("s3cret-token"), std::string::npos);
}

}  // namespace
}  // namespace corral::testing
