#!/usr/bin/python3
"""Generates the per-language seccomp profiles (python.json, javascript.json, ...) from default.json.

    /usr/bin/python3 seccomp/profiles/generate.py            # rewrite the generated profiles
    /usr/bin/python3 seccomp/profiles/generate.py --check    # exit 1 if a generated file is stale
    /usr/bin/python3 seccomp/profiles/generate.py --measure-profile > /tmp/measure.json

The profile format has no include mechanism, so every language profile is written out in full:

  BASE          what every runtime needs: an ordinary glibc process, /bin/sh and coreutils (every
                language can run a shell command), threads, signals, time, poll/select and the
                sockets default.json allows.
  + FEATURES    the runtime-specific mechanisms each language was measured to use (epoll, eventfd,
                inotify, pkeys, splice, setting xattrs), each with the reason in its rule's comment.
  + default.json's hard rules, copied verbatim: every rule with argument filters (ioctl TIOCSTI/
                TIOCLINUX on the low 32 bits, mknod FIFO-only, socket families, clone without
                CLONE_NEW*, personality) and every rule whose action is not "allow" (clone3 ENOSYS,
                the documented REDTEAM denials). They cannot drift: --check fails when default.json
                changes and the profiles were not regenerated.
  + one documentation rule listing what default.json allows but this profile denies.

Everything else fails with EPERM, and foreign ABIs are killed (bad_arch_action from default.json).
A language profile never allows a syscall default.json denies (checked here and in
tests/integration/seccomp_lang_test.cc).

How the sets were measured (Debian 12, x86_64, kernel 6.x): each runtime ran realistic workloads
inside corral sandboxes under default.json with ptrace allowed (--measure-profile prints that
profile), wrapped in `strace -f -qq -o /out/trace`, for every step the runner performs (library
install, compile, run):
  python 3.11   pip install (wheel and source tree), numpy/pandas/scipy/sympy/PIL, matplotlib Agg
                savefig png+svg, ThreadPoolExecutor, subprocess (+shell pipes), multiprocessing
                fork/spawn/forkserver pools and Queue, TCP/UDP/IPv6 on loopback, getaddrinfo,
                asyncio server+client+subprocess, sqlite3 file db, mmap, signals/itimers, ctypes
  node 20       npm install of a local tarball, fs sync/promises/streams/watch, child_process exec/
                spawn/fork, worker_threads, http/net/dgram on loopback, dns.lookup, crypto scrypt/
                pbkdf2, zlib, os.networkInterfaces
  java 17       javac, then a program with thread pools, parallel streams, CompletableFuture,
                ProcessBuilder/Runtime.exec, ServerSocket/Socket/DatagramSocket, HttpServer +
                HttpURLConnection, NetworkInterface, NIO Files.walk, WatchService, FileChannel.map +
                lock, SecureRandom, time zones, GC pressure (serial GC, as the handler runs it)
  go 1.19       go mod init/edit, go build with a replace'd local module, then a program with 50
                goroutines, GC pressure, net/http server+client, tcp6, udp, LookupHost, Interfaces,
                os/exec with pipes, file ops + io.Copy, os.Pipe, signal.Notify, time zones, tickers
  cpp (g++ 12)  g++ -O2 (cc1plus, as, collect2, ld), then std::thread, condition_variable,
                std::async, random_device, <filesystem>, system(), popen()
  r 4.2         R CMD INSTALL of a source package, then data.frame/aggregate/lm, png() and pdf()
                plots, write/read.csv, system(), parallel::mclapply (fork) and a PSOCK cluster
                (sockets), matrix algebra, socketConnection
  ruby 3.1      gem install --local, then threads/Queue/Mutex, TCPServer/UDPSocket, getaddrinfo,
                fork/Process.wait, IO.pipe, backticks, Open3, IO.popen, spawn, Tempfile + flock,
                Fiber, Ractor, Signal.trap
  bash 5.2      coreutils pipelines (sort, uniq, awk, sed, find, xargs, cp -a, mv, ln, tar+gzip,
                md5sum, mkfifo, timeout, dd, sync, ps, df, ...), process substitution, background
                jobs, /dev/tcp, and python3 called from the script
  and a second round: pty.fork, ProcessPoolExecutor, shared_memory, http.server, unix sockets,
                os.nice; fs.cpSync, brotli, wasm, os.setPriority; FileChannel.transferTo, UNIX-domain
                channels, Thread.setPriority; Go unix sockets, flock, async preemption; R svg/jpeg/
                mcparallel; Ruby Etc, Open3, IO.select, setsid, Process.setpriority; bash nice, ionice,
                flock, top, free, git, make, gcc, script, and node/ruby/Rscript started from the script
                (which found setpriority, ioprio_set and signalfd4)

Every one of those syscalls is in BASE or in the language's FEATURES. Nothing measured needed:
SysV IPC, POSIX message queues, AIO (io_setup...), mlock*, membarrier (not even the JVM: JDK 17
does not use it), mincore (not even Go 1.19), remap_file_pages, memfd_create, timerfd, sched_set*, set*uid/set*gid/
setgroups, capset, seccomp, landlock, sync/syncfs,
readahead, sync_file_range, vmsplice, tee, fanotify_mark, futex_waitv, get_robust_list,
process_mrelease, get/set_thread_area — so no language profile allows them (signalfd and ioprio_*
only in bash's, for util-linux script and ionice). The only syscalls the workloads saw refused by
default.json were set_mempolicy (procps `ps`, which carries on) and the kernel's own EPERM for
epoll_ctl on regular files (Go's poller tries, by design). Rerunning every workload under its
language profile (with ptrace added) showed no syscall refused that default.json allows, except
sync() (void in glibc: `sync` and os.sync() still succeed, they just do not flush the host's disks).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------------------------------------
# BASE: every profile. Groups keep the layout of default.json.

BASE = [
    {
        "comment": "BASE file I/O, descriptors and file metadata: what glibc, /bin/sh and coreutils use "
                   "(cp: copy_file_range, fchown, getxattr/listxattr; ls/ps: getxattr, get_mempolicy; "
                   "python shutil and java: sendfile; go build: flock, fallocate)",
        "names": [
            "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
            "openat", "openat2", "close", "close_range", "lseek", "dup", "dup3", "fcntl", "flock",
            "fsync", "fdatasync", "truncate", "ftruncate", "fallocate", "fadvise64", "copy_file_range", "sendfile",
            "fstat", "newfstatat", "statx", "statfs", "fstatfs", "faccessat", "faccessat2",
            "getdents64", "getcwd", "chdir", "fchdir", "mkdirat", "renameat", "renameat2", "linkat", "unlinkat",
            "symlinkat", "readlinkat", "fchmod", "fchmodat", "fchown", "fchownat", "umask", "utimensat",
            "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
            "pipe2", "ioctl",
        ],
    },
    {
        "comment": "BASE file I/O on kernels and libseccomp versions new enough to know it",
        "names": ["fchmodat2", "getxattrat", "listxattrat"],
        "optional": True,
    },
    {
        "comment": "BASE legacy x86_64 spellings (aarch64 only has the *at forms)",
        "names": [
            "open", "creat", "stat", "lstat", "access", "getdents", "mkdir", "rmdir", "rename", "link", "unlink",
            "symlink", "readlink", "chmod", "chown", "lchown", "utime", "utimes", "futimesat", "dup2", "pipe",
            "poll", "select", "fork", "vfork", "pause", "alarm", "time", "getpgrp", "arch_prctl", "getrlimit",
        ],
        "optional": True,
    },
    {
        "comment": "BASE memory (mincore, mlock*, membarrier, remap_file_pages, pkeys, memfd_create are not here)",
        "names": ["brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync", "get_mempolicy"],
    },
    {
        "comment": "BASE memory: CET shadow stacks and mseal for newer glibc",
        "names": ["map_shadow_stack", "mseal"],
        "optional": True,
    },
    {
        "comment": "BASE threads and futexes; scheduling may be read, not changed, and priority only lowered "
                   "(setpriority: nice, os.nice, os.setPriority, Process.setpriority; raising it needs "
                   "CAP_SYS_NICE, which the sandbox never has)",
        "names": [
            "futex", "set_robust_list", "set_tid_address", "rseq", "gettid", "sched_yield", "sched_getaffinity",
            "sched_getparam", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
            "sched_rr_get_interval", "sched_getattr", "getcpu", "getpriority", "setpriority",
        ],
    },
    {
        "comment": "BASE futex2 for newer glibc",
        "names": ["futex_wake", "futex_wait", "futex_requeue"],
        "optional": True,
    },
    {
        "comment": "BASE processes, exec, wait (pidfds: Go >= 1.23 and Python >= 3.12 asyncio watch children "
                   "with them); fork and threads go through clone (below)",
        "names": [
            "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill", "tkill", "tgkill",
            "getpid", "getppid", "getpgid", "setpgid", "getsid", "setsid", "pidfd_open", "pidfd_send_signal",
            "prctl", "uname", "sysinfo", "getrandom", "getrusage", "times", "prlimit64", "setrlimit", "capget",
        ],
    },
    {
        "comment": "BASE credentials, read only (node reads its capabilities and groups; ruby getresuid)",
        "names": ["getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups"],
    },
    {
        "comment": "BASE signals",
        "names": [
            "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait",
            "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "restart_syscall",
        ],
    },
    {
        "comment": "BASE time: reading it, sleeping, interval and POSIX timers (ruby's timer thread and "
                   "coreutils timeout use timer_create)",
        "names": [
            "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "getitimer", "setitimer",
            "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
        ],
    },
    {
        "comment": "BASE waiting on descriptors without epoll",
        "names": ["ppoll", "pselect6"],
    },
    {
        "comment": "BASE sockets (every runtime, and bash's /dev/tcp); which ones socket() may create is decided below",
        "names": [
            "socketpair", "bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername",
            "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
            "shutdown",
        ],
    },
]

# ------------------------------------------------------------------------------------------------
# FEATURES: runtime-specific mechanisms. "legacy" names are x86_64-only spellings (optional rule).

FEATURES = {
    "epoll": {"names": ["epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2"],
              "legacy": ["epoll_create", "epoll_wait"]},
    "eventfd": {"names": ["eventfd2"], "legacy": ["eventfd"]},
    "inotify": {"names": ["inotify_init1", "inotify_add_watch", "inotify_rm_watch"], "legacy": ["inotify_init"]},
    "pkeys": {"names": ["pkey_alloc", "pkey_free", "pkey_mprotect"]},
    "splice": {"names": ["splice"]},
    "signalfd": {"names": ["signalfd4"], "legacy": ["signalfd"]},
    "ioprio": {"names": ["ioprio_get", "ioprio_set"]},
    "xattr-write": {"names": ["setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"],
                    "newer": ["setxattrat", "removexattrat"]},
}

EPOLL_PY = "asyncio and selectors (subprocess, socketserver) use epoll"

PROFILES = {
    "python": {
        "runtime": "CPython 3.11 with numpy/pandas/matplotlib, pip for local wheels and source trees",
        "extras": [("epoll", EPOLL_PY + "; pip imports selectors too")],
    },
    "javascript": {
        "runtime": "node 20 (libuv, V8) and npm",
        "extras": [
            ("epoll", "libuv's event loop is epoll; node does not start without it"),
            ("eventfd", "libuv wakes its loop from the thread pool and worker_threads with an eventfd"),
            ("inotify", "fs.watch and fs.watchFile are inotify watches"),
            ("pkeys", "V8 allocates a memory protection key at startup to write-protect JIT/wasm code "
                      "(pkey_alloc; it falls back without one, but the key only narrows what the process can do)"),
        ],
    },
    "java": {
        "runtime": "OpenJDK 17 (javac and java, serial GC as the handler runs them)",
        "extras": [
            ("epoll", "NIO selectors (HttpServer, SocketChannel, the JDK HTTP client) are epoll"),
            ("eventfd", "NIO's EPollSelector wakes up through an eventfd"),
            ("inotify", "java.nio.file.WatchService is inotify (the JVM uses the legacy inotify_init)"),
        ],
    },
    "go": {
        "runtime": "Go 1.19 (the go tool: go build, go mod) and the static binaries it builds (CGO_ENABLED=0)",
        "extras": [
            ("epoll", "the runtime's network poller is epoll (every net, os/exec pipe and os.File with a poller)"),
            ("eventfd", "Go >= 1.21 wakes the poller with an eventfd and throws 'runtime: eventfd failed' "
                        "without it (1.19 uses a pipe)"),
            ("splice", "net.TCPConn.ReadFrom/io.Copy between sockets, pipes and files splice through a pipe"),
        ],
    },
    "cpp": {
        "runtime": "g++ 12 (cc1plus, as, collect2, ld) and the programs it builds (threads, <filesystem>, "
                   "system/popen)",
        "extras": [],
    },
    "r": {
        "runtime": "R 4.2 (Rscript, R CMD INSTALL, parallel::mclapply forks, PSOCK clusters over loopback "
                   "sockets, png/pdf devices)",
        "extras": [],
    },
    "ruby": {
        "runtime": "Ruby 3.1 and gem",
        "extras": [
            ("eventfd", "the VM's timer thread is woken through an eventfd (thread switches, signals, Process.wait)"),
            ("epoll", "Ruby >= 3.3's timer thread is an epoll loop and calls rb_bug without it (3.1 uses ppoll)"),
        ],
    },
    "bash": {
        "runtime": "bash 5.2, coreutils and the other tools a script drives — including python3, node, "
                   "java and go, so every runtime's extras are here",
        "extras": [
            ("epoll", "for the runtimes a script starts (python3 asyncio, node, java NIO, go)"),
            ("eventfd", "for the runtimes a script starts (node, java, go >= 1.21, ruby)"),
            ("inotify", "tail -f, and node/java started from the script"),
            ("pkeys", "node started from the script"),
            ("splice", "go programs started from the script"),
            ("xattr-write", "cp -a, cp --preserve and mv across file systems copy extended attributes and ACLs"),
            ("signalfd", "util-linux script (a pseudo-terminal for a command) waits for signals on a signalfd"),
            ("ioprio", "ionice (util-linux) exits without running its command when ioprio_set fails"),
        ],
    },
}


def load_default():
    with open(os.path.join(HERE, "default.json")) as f:
        return json.load(f)


def default_allow_sets(default):
    """(required, optional) names default.json allows unconditionally."""
    req, opt = set(), set()
    for r in default["rules"]:
        if r["action"] == "allow" and not r.get("args"):
            (opt if r.get("optional") else req).update(r["names"])
    return req, opt


def copied_rules(default):
    """default.json's argument filters and every rule whose action is not plain allow."""
    return [r for r in default["rules"] if r.get("args") or r["action"] != "allow"]


def build(lang, spec, default):
    d_req, d_opt = default_allow_sets(default)
    rules = [dict(g, action="allow") for g in BASE]
    for feature, why in spec["extras"]:
        f = FEATURES[feature]
        rules.append({"comment": f"{feature.upper()}: {why}", "names": list(f["names"]), "action": "allow"})
        if f.get("legacy"):
            rules.append({"comment": f"{feature.upper()}: legacy x86_64 spellings",
                          "names": list(f["legacy"]), "action": "allow", "optional": True})
        if f.get("newer"):
            rules.append({"comment": f"{feature.upper()}: on kernels and libseccomp versions new enough to know them",
                          "names": list(f["newer"]), "action": "allow", "optional": True})
    allowed = set()
    for r in rules:
        dup = allowed & set(r["names"])
        if dup:
            raise SystemExit(f"{lang}: allowed twice: {sorted(dup)}")
        allowed.update(r["names"])
    beyond = allowed - d_req - d_opt
    if beyond:
        raise SystemExit(f"{lang}: allows what default.json does not: {sorted(beyond)}")
    rules += [dict(r) for r in copied_rules(default)]
    denied_req = sorted(d_req - allowed)
    denied_opt = sorted(d_opt - allowed)
    if denied_req:
        rules.append({"comment": "DENIED here although default.json allows them: no " + lang +
                                 " workload needed them (see generate.py for what was measured)",
                      "names": denied_req, "action": "errno:EPERM"})
    if denied_opt:
        rules.append({"comment": "DENIED here although default.json allows them (legacy or newer names)",
                      "names": denied_opt, "action": "errno:EPERM", "optional": True})
    extras = ", ".join(f for f, _ in spec["extras"]) or "nothing"
    return {
        "name": lang,
        "comment": f"GENERATED by generate.py from default.json — edit that script, then run it. "
                   f"Seccomp allowlist for {spec['runtime']}: the common base (glibc, sh, coreutils, threads, "
                   f"signals, time, poll, sockets) + {extras}; everything else fails with EPERM and other ABIs "
                   f"are killed. Argument filters and hard denials are default.json's.",
        "default_action": default["default_action"],
        "bad_arch_action": default.get("bad_arch_action", "kill"),
        "rules": rules,
    }


def measure_profile(default):
    """default.json plus ptrace, so strace can run inside a sandbox and see every attempted syscall."""
    p = json.loads(json.dumps(default))
    p["name"] = "measure"
    p["comment"] = "default.json + ptrace/process_vm_readv for strace inside a sandbox; never ship this"
    for r in p["rules"]:
        r["names"] = [n for n in r["names"] if n not in ("ptrace", "process_vm_readv")]
    p["rules"] = [r for r in p["rules"] if r["names"]]
    p["rules"].append({"names": ["ptrace", "process_vm_readv"], "action": "allow"})
    return p


# ------------------------------------------------------------------------------------------------
# Output in default.json's layout: one rule per block, names wrapped at 110 columns.

def dump(profile):
    def s(v):
        return json.dumps(v, ensure_ascii=False)

    out = ["{"]
    for k in ("name", "comment", "default_action", "bad_arch_action"):
        out.append(f"  {s(k)}: {s(profile[k])},")
    out.append('  "rules": [')
    blocks = []
    for r in profile["rules"]:
        lines = ["    {"]
        fields = []
        if "comment" in r:
            fields.append([f"      \"comment\": {s(r['comment'])}"])
        names, cur = ["      \"names\": ["], "       "
        for n in r["names"]:
            piece = " " + s(n) + ","
            if len(cur) + len(piece) > 110:
                names.append(cur)
                cur = "       "
            cur += piece
        names.append(cur.rstrip(","))
        names.append("      ]")
        fields.append(names)
        fields.append([f"      \"action\": {s(r['action'])}"])
        if r.get("optional"):
            fields.append(["      \"optional\": true"])
        if r.get("args"):
            fields.append([f"      \"args\": {s(r['args'])}"])
        for i, f in enumerate(fields):
            if i + 1 < len(fields):
                f[-1] += ","
            lines += f
        lines.append("    }")
        blocks.append(lines)
    for i, b in enumerate(blocks):
        if i + 1 < len(blocks):
            b[-1] += ","
        out += b
    out.append("  ]")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated profile is missing or stale")
    ap.add_argument("--measure-profile", action="store_true", help="print the strace measurement profile")
    args = ap.parse_args()
    default = load_default()
    if args.measure_profile:
        sys.stdout.write(dump(measure_profile(default)))
        return 0
    stale = []
    for lang, spec in PROFILES.items():
        text = dump(build(lang, spec, default))
        assert json.loads(text)["name"] == lang
        path = os.path.join(HERE, lang + ".json")
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if args.check:
            stale.append(path)
        else:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
            print("wrote", path)
    if stale:
        print("stale (run /usr/bin/python3 seccomp/profiles/generate.py): " + " ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
