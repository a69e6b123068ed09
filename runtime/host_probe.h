// What this host's kernel offers the native backend, and what corral does about each item
// (`corral doctor`). Every check runs the real primitive (a namespace is tested by creating
// one in a throwaway child), not a version guess.
#pragma once

#include <string>
#include <vector>

namespace corral::runtime {

struct HostCheck {
  std::string name;
  bool ok = false;
  bool required = true;   // corral cannot run sandboxes without it
  std::string detail;     // what was found
  std::string action;     // what corral does about it
};

std::vector<HostCheck> probe_host();

}  // namespace corral::runtime
