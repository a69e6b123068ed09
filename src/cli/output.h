// What the CLI commands that run code share: exit codes for outcomes, stdin and output
// plumbing, the --memory size parser.
#pragma once

#include <cstdint>
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
// Prints a finished result the way `corral exec`/`corral run` do without --json.
void report_outcome(const ExecResult& r);

}  // namespace corral::cli
