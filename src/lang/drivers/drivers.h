// Internal: the interactive drivers' scripts (see InteractiveDriver in language.h), one file
// per language, each holding its driver and its relay. They run inside the sandbox with the
// language's own interpreter and its standard library only.
//
// The protocol between relay and driver, over the unix socket kDriverSocket, one connection
// per run: every message is a frame — a 4-byte big-endian length, then that many bytes of
// UTF-8 JSON.
//
//   driver -> relay  {"op": "hello", "pid": N}             on accepting the connection
//   relay  -> driver {"op": "run", "code": "...", "cell": N}
//                    Python: the relay's stdin, stdout and stderr ride on this frame
//                    (SCM_RIGHTS); the driver puts them on its fds 0-2 for the run, so the
//                    run's output (subprocesses' too) goes straight to the exec's pipes.
//   driver -> relay  {"op": "out", "fd": 1|2, "data": "..."}
//                    JavaScript only (node cannot receive descriptors): output as it comes.
//   driver -> relay  {"op": "done", "status": "ok" | "error" | "exit",
//                     "value": "repr" | null, "error": "Type: message", "exit_code": N}
//                    The run is over and the driver has let go of the relay's descriptors.
//
// Timeouts are the relay's: at the deadline it sends SIGINT to the driver (Python raises
// KeyboardInterrupt in the running code, node's vm breaks on SIGINT) and waits the grace
// period for "done"; if none comes, it SIGKILLs the driver, whose state is then lost. The
// relay writes what happened as JSON to the result file (InteractiveRunner reads it):
//   {"status": "ok" | "error" | "exit" | "timeout" | "killed" | "died" | "no_driver",
//    "value": ..., "error": ..., "exit_code": N}
// timeout: the run was interrupted and the driver kept its state; killed: the driver did not
// stop and was killed; died: the driver exited during the run; no_driver: nothing listens.
#pragma once

namespace corral::lang {

extern const char kPythonDriver[];
extern const char kPythonRelay[];
extern const char kJavaScriptDriver[];
extern const char kJavaScriptRelay[];

}  // namespace corral::lang
