// corral serve: placeholder until the command lands.
#include "src/cli/commands.h"

namespace corral::cli {

int serve_command(const std::vector<std::string>& args) {
  (void)args;
  return usage_error("serve: not built yet");
}

}  // namespace corral::cli
