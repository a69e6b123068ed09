#include "backends/docker/exec_helper.h"

#include <unistd.h>

#include <cstdio>
#include <random>

namespace corral::docker {
namespace {

// Shared by every mode: $1 the marker, $2 the mode.
// `proc PID` reads /proc/PID/stat into $st (start time) and $sd (session); it fails for a
// process that is gone, exiting (flag PF_EXITING: set before an exiting process's
// descriptors are closed, so a program whose stdout closed because it is exiting is never
// taken for one still running), a zombie, or a line that is not whole (a name with a
// newline cannot pass for another process's fields).
// `cg` reads the container's own cgroup (v1 or v2, as its cgroup namespace shows it): CPU
// user and system ns into $cu and $cs, the memory high-water mark into $mp; empty where
// unreadable.
constexpr char kPrelude[] = R"SH(set -f
k=$1 m=$2
shift 2
fail() { printf '%sE%s%s' "$k" "$1" "$k" >&2; exit "${2:-125}"; }
proc() {
  st= sd=
  read -r l 2>/dev/null <"/proc/$1/stat" || return 1
  set -- ${l##*) }
  [ -n "${20}" ] && [ "$1" != Z ] && [ "$1" != X ] && [ $(($7 & 4)) -eq 0 ] || return 1
  sd=$4 st=${20}
}
runnable() { case $1 in */*) [ -f "$1" ] && [ -x "$1" ] ;; *) command -v -- "$1" >/dev/null 2>&1 ;; esac; }
cg() {
  cu= cs= mp=
  if read -r cu 2>/dev/null </sys/fs/cgroup/cpuacct/cpuacct.usage_user; then
    read -r cs 2>/dev/null </sys/fs/cgroup/cpuacct/cpuacct.usage_sys || cu=
  elif [ -r /sys/fs/cgroup/cpu.stat ]; then
    while read -r f v; do
      case $f in user_usec) cu=${v}000 ;; system_usec) cs=${v}000 ;; esac
    done 2>/dev/null </sys/fs/cgroup/cpu.stat
  fi
  read -r mp 2>/dev/null </sys/fs/cgroup/memory/memory.max_usage_in_bytes ||
    read -r mp 2>/dev/null </sys/fs/cgroup/memory.peak || mp=
}
)SH";

// step: $1 workdir, $2 the after command, $3 the number of files, then per file its path
// beneath the workdir, the umask that creates it with its mode, a mode for chmod when it has
// execute bits, its data; then the program, run as the helper's child so that the helper can
// report its exit status and the CPU the container used meanwhile, and the memory
// high-water mark when the run raised it (the engines cannot reset it per exec). The shell's
// own stderr is /dev/null while it waits (the program's redirection applies in the subshell
// only): it reports a child killed by a signal ("Killed"), which the program's stderr must
// not show.
constexpr char kStep[] = R"SH(w=$1 a=$2 n=$3
shift 3
if [ "$n" -gt 0 ]; then
  o=$(umask)
  set -C
  while [ "$n" -gt 0 ]; do
    r=$1 d=$w
    while :; do
      case $r in */*) ;; *) break ;; esac
      d=$d/${r%%/*} r=${r#*/}
      if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d" || fail "cannot replace $d"; fi
      if [ ! -d "$d" ]; then umask 022; mkdir -- "$d" || fail "cannot create the directory $d"; fi
    done
    f=$d/$r
    if [ -L "$f" ] || [ -e "$f" ]; then rm -rf -- "$f" || fail "cannot replace $f"; fi
    umask "$2"
    printf %s "$4" >"$f" || fail "cannot write $f"
    if [ -n "$3" ]; then chmod -- "$3" "$f" || fail "cannot set the mode of $f"; fi
    shift 4
    n=$((n - 1))
  done
  set +C
  umask "$o"
fi
runnable "$1" || fail "executable file not found: $1" 127
cg
c0=$cu s0=$cs m0=$mp
exec 3>&2 2>/dev/null
(exec "$@" 2>&3 3>&-)
s=$?
exec 2>&3 3>&-
cg
if [ -n "$c0" ] && [ -n "$cu" ] && [ -n "$s0" ] && [ -n "$cs" ]; then c="$((cu - c0)) $((cs - s0))"; else c="- -"; fi
if [ -n "$m0" ] && [ -n "$mp" ] && [ "$mp" -gt "$m0" ]; then m=$mp; else m=-; fi
printf '%sX%s %s %s%s' "$k" "$s" "$c" "$m" "$k" >&2
[ -z "$a" ] || { printf '%sA' "$k"; (set +f; eval "$a"); printf %s "$k"; } >&2 2>/dev/null
exit "$s"
)SH";

// detach: $1 the fifo directory, $2 "PID STARTTIME" of the registered detached program (or
// empty), then the program. Its stdout and stderr reach the exec through fifos; once it
// has closed both, the cats end and the helper reports it (or its exit, if it exited). The
// shell's own stderr is /dev/null meanwhile (job reports such as "Terminated").
constexpr char kDetach[] = R"SH(t=$1 p=$2
shift 2
if [ -n "$p" ] && proc "${p%% *}" && [ "$st" = "${p#* }" ]; then
  fail "a detached program is already running (pid ${p%% *})"
fi
runnable "$1" || fail "executable file not found: $1" 127
mkdir -m 700 -- "$t" && mkfifo -- "$t/o" "$t/e" ||
  fail "cannot make fifos in $t (a detached program needs mkdir and mkfifo in the image)"
exec 3<&0 4>&2 2>/dev/null
"$@" <&3 >"$t/o" 2>"$t/e" 3<&- 4>&- &
q=$!
cat -- "$t/o" 3<&- 4>&- &
c=$!
cat -- "$t/e" 3<&- >&4 4>&-
wait "$c"
exec 3<&- 2>&4 4>&-
rm -rf -- "$t"
if proc "$q"; then
  printf '%sD%s %s %s%s' "$k" "$q" "$st" "$sd" "$k" >&2
  exit 0
fi
wait "$q" 2>/dev/null
)SH";

// kill: $1 session, $2 pid, $3 start time of the detached program to spare (empty: none).
// kill(-1) is one atomic sweep; sparing a session takes passes over /proc until one finds
// nothing left (a fork bomb gets ten passes, then the atomic sweep after all).
constexpr char kKill[] = R"SH(s=$1 p=$2 t=$3
if [ -n "$p" ] && proc "$p" && [ "$st" = "$t" ] && [ "$sd" = "$s" ]; then
  i=0
  while [ "$i" -lt 10 ]; do
    f=
    set +f
    for d in /proc/[0-9]*; do
      set -f
      q=${d#/proc/}
      [ "$q" = "$$" ] && continue
      read -r l 2>/dev/null <"$d/stat" || continue
      set -- ${l##*) }
      [ -n "${20}" ] && { [ "$1" = Z ] || [ "$4" = "$s" ]; } && continue
      kill -9 "$q" 2>/dev/null && f=1
    done
    [ -n "$f" ] || exit 0
    i=$((i + 1))
  done
fi
kill -9 -1
)SH";

// The engines' API is JSON: its strings must be valid UTF-8.
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (size_t j = 1; j <= n; ++j) {
      const auto cc = static_cast<unsigned char>(s[i + j]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

std::string octal(uint32_t v) {
  char buf[8];
  snprintf(buf, sizeof buf, "%03o", v);
  return buf;
}

std::vector<std::string> helper(const char* mode_script, const std::string& marker, const char* mode) {
  return {"/bin/sh", "-c", std::string(kPrelude) + mode_script, "corral-helper", marker, mode};
}

}  // namespace

std::optional<DetachedProgram> DetachedProgram::parse(const std::string& payload) {
  std::vector<std::string> fields;
  for (size_t at = 0; at <= payload.size();) {
    size_t end = payload.find(' ', at);
    if (end == std::string::npos) end = payload.size();
    fields.push_back(payload.substr(at, end - at));
    at = end + 1;
  }
  if (fields.size() != 3) return std::nullopt;
  for (const std::string& f : fields) {
    if (f.empty() || f.size() > 20 || f.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  }
  return DetachedProgram{fields[0], fields[1], fields[2]};
}

std::optional<StepExit> StepExit::parse(const std::string& payload) {
  std::vector<std::string> f;
  for (size_t at = 0; at <= payload.size();) {
    size_t end = payload.find(' ', at);
    if (end == std::string::npos) end = payload.size();
    f.push_back(payload.substr(at, end - at));
    at = end + 1;
  }
  auto number = [](const std::string& s) -> std::optional<uint64_t> {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoull(s);
  };
  if (f.size() != 4) return std::nullopt;
  auto status = number(f[0]);
  if (!status || *status > 255) return std::nullopt;
  StepExit e;
  e.status = static_cast<int>(*status);
  e.cpu_user_ns = number(f[1]);
  e.cpu_sys_ns = number(f[2]);
  e.peak_memory_bytes = number(f[3]);
  return e;
}

bool fits_inline(const std::vector<FileEntry>& files) {
  size_t total = 0;
  for (const FileEntry& f : files) {
    if (f.data.size() > kInlineFileMax) return false;
    total += f.data.size();
    if (total > kInlineTotalMax) return false;
    if (f.data.find('\0') != std::string::npos || !valid_utf8(f.data)) return false;
  }
  return true;
}

std::string new_control_marker() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  char buf[32];
  snprintf(buf, sizeof buf, "\x1e" "corral%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

std::vector<std::string> step_argv(const std::string& marker, const std::string& workdir,
                                   const std::vector<InlineFile>& files, const std::string& after,
                                   const std::vector<std::string>& argv) {
  std::vector<std::string> out = helper(kStep, marker, "step");
  out.push_back(workdir);
  out.push_back(after);
  out.push_back(std::to_string(files.size()));
  for (const InlineFile& f : files) {
    const uint32_t mode = f.mode & 0777;
    out.push_back(f.rel);
    out.push_back(octal(0777 & ~mode));
    out.push_back(mode & 0111 ? octal(mode) : "");
    out.push_back(f.data);
  }
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> detach_argv(const std::string& marker, const std::string& fifo_dir,
                                     const std::optional<DetachedProgram>& running,
                                     const std::vector<std::string>& argv) {
  std::vector<std::string> out = helper(kDetach, marker, "detach");
  out.push_back(fifo_dir);
  out.push_back(running ? running->pid + " " + running->starttime : "");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> kill_argv(const std::optional<DetachedProgram>& spare) {
  std::vector<std::string> out = helper(kKill, "", "kill");
  out.push_back(spare ? spare->sid : "");
  out.push_back(spare ? spare->pid : "");
  out.push_back(spare ? spare->starttime : "");
  return out;
}

}  // namespace corral::docker
