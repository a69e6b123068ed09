// The supervisor <-> corral-init protocol: small framed messages over a SOCK_STREAM
// socketpair. A frame is an 8-byte header {type, length} followed by `length` payload
// bytes; file descriptors (an exec's stdio) ride on the header with SCM_RIGHTS.
//
// The init side must not allocate (see launch_plan.h), so these functions take caller
// buffers and use only syscalls.
#pragma once

#include <cstddef>
#include <cstdint>

namespace corral::runtime {

enum class Frame : uint32_t {
  kGo = 1,          // supervisor -> init: ids mapped; build the rootfs
  kReady,           // init -> supervisor: rootfs built, waiting for execs
  kSetupError,      // init -> supervisor: ErrorPayload; init exits after sending it
  kExec,            // supervisor -> init: exec request (see ExecWire), fds: stdin, stdout, stderr
  kExecStarted,     // init -> supervisor: the program is running
  kExecFailed,      // init -> supervisor: ErrorPayload (chdir, execve, ...)
  kExited,          // init -> supervisor: ExitPayload; every process of the exec is gone
  kViolation,       // init -> supervisor: ViolationPayload (seccomp kill)
  kKill,            // supervisor -> init: kill every process of the running exec
  // Detached execs (ExecWire.flags & kExecDetach): once the program has closed its stdout
  // and stderr, the supervisor asks init to let it run on past the exec. At most one
  // detached program per sandbox; later execs' processes still end with them, it does not.
  kDetach,          // supervisor -> init: the running exec's program becomes the detached one
  kDetached,        // init -> supervisor: DetachedPayload; the exec is over, the program runs on
  // After kGo, once the supervisor has made the sandbox's cgroup and brought the loopback
  // up; fds: the cgroup's attach files when init is to join it now (v1), else none. init
  // joins, enters its cgroup namespace, then reports kReady.
  kPlaced,
};

struct FrameHeader {
  uint32_t type;
  uint32_t length;
};

inline constexpr uint32_t kMaxFrame = 16u << 20;  // argv + env of one exec, generously
inline constexpr int kMaxFds = 8;

struct ErrorPayload {
  int32_t err;        // errno
  char step[48];      // "mount proc", "execve", ...
  char detail[200];   // the path involved
};

struct ExitPayload {
  int32_t wait_status;  // as from wait4()
  int32_t reserved;
  int64_t user_us;
  int64_t sys_us;
  int64_t maxrss_kb;
};

struct DetachedPayload {
  int32_t pid;  // in the sandbox's pid namespace
  int32_t reserved;
};

struct ViolationPayload {
  uint32_t arch;  // AUDIT_ARCH_*
  int32_t nr;
  int32_t pid;    // in the sandbox's pid namespace
  int32_t reserved;
};

// Exec request: this fixed part, then `strings_len` bytes of NUL-terminated strings:
// cwd, argv[0..argc), envp[0..envc).
struct ExecWire {
  uint32_t argc;
  uint32_t envc;
  uint32_t strings_len;
  uint32_t flags;  // kExecDetach
};

inline constexpr uint32_t kExecDetach = 1;  // may be detached (kDetach) once it closes its output

// Writes one frame (retrying on EINTR/partial writes). Returns 0 or -errno.
int send_frame(int fd, Frame type, const void* payload, uint32_t length, const int* fds = nullptr,
               int nfds = 0);
// Reads one frame header and any fds attached to it (up to kMaxFds; fds arrive O_CLOEXEC).
// Returns 0, -errno, or -EPIPE at a clean EOF.
int recv_header(int fd, FrameHeader* header, int* fds, int* nfds);
// Reads exactly `length` bytes. Returns 0 or -errno (-EPIPE at EOF).
int read_full(int fd, void* buf, size_t length);
// Fills an ErrorPayload (truncating strings).
void make_error(ErrorPayload* out, const char* step, int err, const char* detail);

}  // namespace corral::runtime
