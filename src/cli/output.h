// What the CLI commands that run code share: exit codes for outcomes, stdin and output
// plumbing, the --memory size parser.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "src/core/exec_result.h"

namespace corral::cli {

// The program's own exit code; 128+N for signal N; 124 timeout; 125 output cap; 137 OOM;
// 159 seccomp violation; 2 setup error or bad input; 70 internal error.
int exit_code_for(const ExecResult& r);
// Reads all of fd 0 (up to 64 MiB). False on error or overflow.
bool read_all_stdin(std::string* out);
void write_all(int fd, std::string_view s);
// "512M", "2G", "1048576" -> bytes; nullopt if malformed.
std::optional<uint64_t> parse_size(const std::string& text);
// Parses `args` for command `cmd`. Returns an exit code when the command should stop here
// (a usage error, or --help printed), nullopt to go on.
std::optional<int> parse_options(const char* cmd, const std::vector<std::string>& args,
                                 const boost::program_options::options_description& desc,
                                 const boost::program_options::positional_options_description& pos,
                                 boost::program_options::variables_map* vm);
// CORRAL_PREPARED_NETNS=1: keep network namespaces prepared between runs (NativeOptions::
// prepared_netns); anything else, or unset: make each one while the run is set up.
bool prepared_netns_wanted();
// Prints a finished result the way `corral exec`/`corral run` do without --json.
void report_outcome(const ExecResult& r);
// Exits with `code` now and runs `teardown` in a child process (a session of its own, stdio
// on /dev/null) that outlives this one by as long as the teardown takes: the caller has its
// answer without waiting for the kernel to take a sandbox apart. Returns only if no child
// could be made; the caller then tears down itself.
void exit_then_teardown(int code, const std::function<void()>& teardown);

}  // namespace corral::cli
