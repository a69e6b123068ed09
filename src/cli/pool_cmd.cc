// corral pool: placeholder until the command lands.
#include "src/cli/commands.h"

namespace corral::cli {

int pool_command(const std::vector<std::string>& args) {
  (void)args;
  return usage_error("pool: not built yet");
}

}  // namespace corral::cli
