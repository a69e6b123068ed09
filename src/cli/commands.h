// corral's CLI subcommands. Each takes the arguments after its name and returns the
// process exit code. Usage errors print one line to stderr and return kUsageError.
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

inline constexpr int kUsageError = 2;

int exec_command(const std::vector<std::string>& args);
int doctor_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);        // corral run --lang ...
int languages_command(const std::vector<std::string>& args);  // corral languages
int rootfs_command(const std::vector<std::string>& args);     // corral rootfs import|list|rm|build
// `corral rootfs build ...` (args after "build"); called by rootfs_command.
int rootfs_build_command(const std::vector<std::string>& args);
int check_command(const std::vector<std::string>& args);  // corral check --policy P [--lang L] FILE

int serve_command(const std::vector<std::string>& args);  // corral serve (HTTP API, /mcp)
int mcp_command(const std::vector<std::string>& args);    // corral mcp (MCP over stdio)
int pool_command(const std::vector<std::string>& args);   // corral pool ...

// Prints "corral: <message>" to stderr and returns kUsageError.
int usage_error(const std::string& message);

}  // namespace corral::cli
