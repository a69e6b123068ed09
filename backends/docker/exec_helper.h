// The shell helper container execs run through when a call needs more than the program: every
// Engine API call is a round trip (an exec costs three, the archive API tens of milliseconds),
// so a language run's files, its program and its artifact listing go in one exec.
//
//   step    write small files (put_files' rules: real directories, a symlink or file in the
//           way is replaced, never followed; created with noclobber, so a link planted in
//           between makes the write fail instead of going through it), run the program,
//           then an `after` command whose output comes back apart from the program's
//   detach  start the program in the background with its stdout/stderr through fifos,
//           return once it has closed both (its readiness) and report its pid, start time
//           and session; an ordinary result if it exited first
//   kill    end every process of the sandbox user except a detached program's session (the
//           timeout and output-cap path); everything when none is registered or it is gone
//
// The helper reports to the executor in control records on stderr, each framed by a marker
// made fresh for the exec: MARKER TYPE PAYLOAD MARKER. ControlFilter (exec_stream.h) takes
// them out of the program's stderr. Types: 'E' the helper failed before the program started
// (payload: why), 'X' "STATUS USER_NS SYS_NS PEAK": the program's exit status as the engine
// would report it (128+N for signal N; it spares an exec inspect), the CPU the container
// used while it ran, its memory high-water mark if the run raised it ("-": unknown), 'A'
// the after command's stdout, 'D' "PID STARTTIME SID" of a detached program.
//
// The helper needs /bin/sh in the image (detach also mkdir, mkfifo and cat; replacing a file
// or directory in the way, rm); without /bin/sh the executor uses the archive API and plain
// execs. It runs as the sandbox user, so it can do nothing the sandbox's own code could not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/executor.h"

namespace corral::docker {

// Files travel as arguments when each is small text: at most this many bytes each and in all
// (Linux caps one argument at 128 KiB), valid UTF-8 (the API's JSON) and without NUL bytes.
inline constexpr size_t kInlineFileMax = 64 << 10;
inline constexpr size_t kInlineTotalMax = 256 << 10;

struct InlineFile {
  std::string rel;  // relative to the workdir, already checked (beneath_workdir)
  std::string data;
  uint32_t mode = 0644;
};

// A step's exit as its helper reported it (an 'X' record).
struct StepExit {
  int status = -1;
  std::optional<uint64_t> cpu_user_ns, cpu_sys_ns, peak_memory_bytes;
  static std::optional<StepExit> parse(const std::string& payload);
};

// A detached program as its helper reported it (all in the container's pid namespace).
struct DetachedProgram {
  std::string pid, starttime, sid;
  // "PID STARTTIME SID" -> the program; nullopt if that is not three numbers.
  static std::optional<DetachedProgram> parse(const std::string& payload);
};

bool fits_inline(const std::vector<FileEntry>& files);

// A marker no program can guess ahead: a control byte, "corral", 16 random hex digits.
std::string new_control_marker();

std::vector<std::string> step_argv(const std::string& marker, const std::string& workdir,
                                   const std::vector<InlineFile>& files, const std::string& after,
                                   const std::vector<std::string>& argv);
// `fifo_dir`: a fresh path for the fifos (made and removed by the helper); `running`: the
// detached program already registered for this sandbox, refused while it still runs.
std::vector<std::string> detach_argv(const std::string& marker, const std::string& fifo_dir,
                                     const std::optional<DetachedProgram>& running,
                                     const std::vector<std::string>& argv);
std::vector<std::string> kill_argv(const std::optional<DetachedProgram>& spare);

}  // namespace corral::docker
