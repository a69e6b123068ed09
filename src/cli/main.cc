// corral: run untrusted code in an isolated Linux sandbox.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "src/cli/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: corral <command> [options]\n"
    "\n"
    "commands:\n"
    "  exec [--policy FILE] [--timeout MS] [--json] -- ARGV...   run a program in a sandbox\n"
    "  run --lang LANG (-c CODE | FILE | -) [--lib PATH]...       run code in a language\n"
    "  languages [--json]                                         which languages this host runs\n"
    "  rootfs import|list|inspect|rm|build ...                    named root filesystems (images)\n"
    "  check --policy PRESET|FILE [--lang LANG] FILE|-            scan code against a security policy\n"
    "  doctor                                                     what this host supports\n"
    "  version                                                    print the version\n"
    "\n"
    "`corral <command> --help` describes a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return corral::cli::kUsageError;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "exec") return corral::cli::exec_command(args);
  if (cmd == "doctor") return corral::cli::doctor_command(args);
  if (cmd == "run") return corral::cli::run_command(args);
  if (cmd == "languages") return corral::cli::languages_command(args);
  if (cmd == "rootfs") return corral::cli::rootfs_command(args);
  if (cmd == "check") return corral::cli::check_command(args);
  if (cmd == "serve") return corral::cli::serve_command(args);
  if (cmd == "mcp") return corral::cli::mcp_command(args);
  if (cmd == "pool") return corral::cli::pool_command(args);
  if (cmd == "version" || cmd == "--version") {
    printf("corral %s\n", CORRAL_VERSION);
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    fputs(kUsage, stdout);
    return 0;
  }
  return corral::cli::usage_error("unknown command '" + cmd + "' (try `corral help`)");
}
