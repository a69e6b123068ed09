// corral mcp: placeholder until the command lands.
#include "src/cli/commands.h"

namespace corral::cli {

int mcp_command(const std::vector<std::string>& args) {
  (void)args;
  return usage_error("mcp: not built yet");
}

}  // namespace corral::cli
