// What the CLI commands that run code share: exit codes for outcomes, stdin and output
// plumbing, the --memory size parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
// Prints a finished result the way `corral exec`/`corral run` do without --json.
void report_outcome(const ExecResult& r);

}  // namespace corral::cli
