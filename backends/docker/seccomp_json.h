// corral's seccomp profiles (seccomp/profiles/*.json, see seccomp/profile.h) translated to the
// Docker/OCI seccomp JSON that runc loads, with the same meaning as corral's own compiler:
// more specific rules win ("ioctl is allowed except TIOCSTI" becomes allows for every other
// value, because libseccomp drops conditional rules beside an unconditional one), other ABIs
// are refused (only the native architecture is listed), and "kill" kills the process
// (SCMP_ACT_KILL_PROCESS: the engine has no supervisor to report the syscall to).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "seccomp/profile.h"
#include "src/core/status.h"

namespace corral::docker {

StatusOr<nlohmann::json> seccomp_to_docker(const seccomp::Profile& profile);

// Loads a profile by name (<seccomp profile_dir>/<name>.json) or path, and translates it.
StatusOr<std::string> docker_seccomp_for(const std::string& name_or_path);

}  // namespace corral::docker
