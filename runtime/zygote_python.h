// The interpreter inside corral-zygote: CPython embedded, its preload list imported once in
// the template, and the entry point a zygote sandbox's worker calls instead of execve.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/zygote.h"
#include "src/core/status.h"

namespace corral::runtime {

// Starts the interpreter and imports options.preload, then runs options.warmup. Fills
// `info` with {"python", "preloaded", "missing"}.
Status python_start(const ZygoteOptions& options, nlohmann::json* info);

// True if argv is a python3 invocation the template runs itself: [interp, (-u|-B|-E|-s|-q)*,
// (-c CODE | FILE), args...]. Anything else (-m pip, the REPL, stdin) is exec'd as usual.
// Allocation-free: corral-init calls it.
bool python_accepts(char* const* argv);

// In the worker, after every isolation step: runs the program as `python3 argv[1:]` would,
// in a fresh __main__, with `envp` as os.environ. Returns the exit status.
int python_interpret(char* const* argv, char* const* envp, const char* cwd);

// In a prepared worker (see worker.h), after every isolation step and before its request:
// what python_interpret would do first in any fork of the template (after-fork hooks,
// numpy reseeded), then a rehearsal of a run of `pass`, so that the pages of the template
// that a run writes are copied then rather than while the request waits.
void python_prepare();

// In a fork of the template: the after-fork steps, then a run of `code` as python_prepare
// rehearses `pass` (output to this process's stdout and stderr). For profiling what a run
// writes (see profile_written_pages in zygote_template.cc).
void python_rehearse(const char* code);

}  // namespace corral::runtime
