// Red-team probes written in Python. With CORRAL_REDTEAM_ZYGOTE=1 they run in the zygote's
// own interpreter (a fork of the template, never exec'd), which is the path the C probes
// cannot reach: the worker that runs them carries the template's memory, so these check
// that nothing of the template or of corral is left to it. Without it they run in a real
// python3 in a cold sandbox, and must be just as safe.
#include "tests/redteam/redteam_fixture.h"

namespace corral::redteam {
namespace {

// The prelude every probe shares: report lines as the C probes print them, and raw
// syscalls through ctypes (what user code would use to go around Python's own checks).
constexpr char kPrelude[] = R"PY(
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def report(row, safe, what):
    print("%s row%02d %s" % ("SAFE" if safe else "UNSAFE", row, what), flush=True)
def fails(fn):
    try:
        return fn() == -1 or fn() is None and False
    except OSError:
        return True
def sys_fails(nr, *args):
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(nr, *args) == -1
)PY";

class RedteamPython : public Redteam {
 protected:
  ExecResult RunPython(const std::string& body) {
    auto sb = Create(json{{"seccomp", "python"}});
    if (!sb) return {};
    ExecResult r = Exec(*sb, {"/usr/bin/python3", "-c", std::string(kPrelude) + body});
    ex_.destroy(*sb);
    return r;
  }
};

TEST_F(RedteamPython, Row14_NoTracingInitOrTheTemplate) {
  auto r = RunPython(R"PY(
PTRACE_ATTACH = 16
report(14, sys_fails(101, PTRACE_ATTACH, 1, 0, 0), "ptrace(ATTACH) of init refused")
report(14, sys_fails(101, 0, 0, 0, 0), "ptrace(TRACEME) refused")
for path in ("/proc/1/mem", "/proc/1/environ", "/proc/1/maps"):
    try:
        open(path, "rb").read(1)
        report(14, False, "read " + path)
    except OSError:
        report(14, True, "read of %s refused" % path)
)PY");
  ExpectAllSafe(r, 5);
}

TEST_F(RedteamPython, Row17_RuntimeBinaryCannotBeReplaced) {
  auto r = RunPython(R"PY(
exe = os.readlink("/proc/self/exe")
for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
    try:
        fd = os.open("/proc/self/exe", flags)
        os.close(fd)
        report(17, False, "opened %s for writing (flags %d)" % (exe, flags))
    except OSError as e:
        report(17, True, "no write to the running binary (%s)" % errno.errorcode.get(e.errno))
try:
    fd = os.open("/proc/1/exe", os.O_RDONLY)
    os.close(fd)
    report(17, False, "opened init's binary")
except OSError:
    report(17, True, "init's binary is closed to the sandbox")
)PY");
  ExpectAllSafe(r, 4);
}

TEST_F(RedteamPython, Row19to22_NoNamespacesMountsOrChroot) {
  auto r = RunPython(R"PY(
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x00020000, 0x40000000
for name, flag in (("user", CLONE_NEWUSER), ("mount", CLONE_NEWNS), ("net", CLONE_NEWNET)):
    report(19, sys_fails(272, flag), "unshare(%s) refused" % name)
report(20, libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == -1, "mount refused")
report(21, sys_fails(308, 0, 0), "setns refused")
report(22, libc.chroot(b"/tmp") == -1, "chroot refused")
)PY");
  ExpectAllSafe(r, 6);
}

TEST_F(RedteamPython, Row24to26_NoKernelSurface) {
  auto r = RunPython(R"PY(
report(24, sys_fails(175, 0, 0, b""), "init_module refused")
report(25, sys_fails(248, b"user", b"corral", b"x", 1, ctypes.c_long(-4)), "add_key refused")
report(26, sys_fails(321, 0, 0, 0), "bpf refused")
report(26, sys_fails(298, 0, 0, -1, -1, 0), "perf_event_open refused")
)PY");
  ExpectAllSafe(r, 4);
}

TEST_F(RedteamPython, Row29_IdentityIsTheSandboxUser) {
  auto r = RunPython(R"PY(
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
report(29, os.getuid() == 1000 and os.geteuid() == 1000, "uid 1000")
report(29, st["CapEff"].strip() == "0" * 16 and st["CapPrm"].strip() == "0" * 16, "no capabilities")
report(29, st["NoNewPrivs"].strip() == "1", "no_new_privs")
report(29, st["Seccomp"].strip() == "2", "seccomp filter on")
report(29, libc.setuid(0) == -1, "setuid(0) refused")
uid_map = open("/proc/self/uid_map").read().split()
report(29, "0" not in uid_map[1::3], "no host root in the uid map")
)PY");
  ExpectAllSafe(r, 6);
}

TEST_F(RedteamPython, Row30_37_NothingInheritedFromTheTemplateOrCorral) {
  auto r = RunPython(R"PY(
env_block = open("/proc/self/environ", "rb").read()
cmdline = open("/proc/self/cmdline", "rb").read()
for what, data in (("environ", env_block), ("cmdline", cmdline)):
    # Built at run time: the probe's own text is in a cold python's cmdline.
    for needle in (b"corral" + b"-zygote", b"/var/cache/" + b"corral", b"MPLCONFIGDIR=" + b"/var", b"TOK" + b"EN="):
        if needle in data:
            report(30, False, "%s shows %r" % (what, needle))
            break
    else:
        report(30, True, "no template or corral data in /proc/self/%s" % what)
report(30, not any(k.startswith("CORRAL_TOKEN") for k in os.environ), "no tokens in os.environ")
report(30, os.environ.get("HOME", "") != "/var/cache/" + "corral/zygote", "HOME is not the template's")
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
report(37, fds[:3] == [0, 1, 2] and len(fds) <= 4, "only stdio open (%s)" % fds)
import gc
leaked = [o for o in gc.get_objects() if type(o).__name__ in ("socket", "SocketIO")]
report(37, not leaked, "no socket objects left in the heap")
)PY");
  ExpectAllSafe(r, 6);
}

}  // namespace
}  // namespace corral::redteam
