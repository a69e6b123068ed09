#include "src/core/sandbox_path.h"

namespace corral {

StatusOr<std::vector<std::string>> split_sandbox_path(const std::string& field, const std::string& workdir,
                                                      const std::string& path) {
  if (path.empty()) return InvalidArgument(field, "path is empty");
  if (path.find('\0') != std::string::npos) return InvalidArgument(field, "path contains NUL");
  std::string full = path[0] == '/' ? path : workdir + "/" + path;
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < full.size()) {
    size_t j = full.find('/', i);
    if (j == std::string::npos) j = full.size();
    std::string part = full.substr(i, j - i);
    if (part == "." || part == "..") return InvalidArgument(field, "path must not contain '.' or '..': " + path);
    if (!part.empty()) parts.push_back(part);
    i = j + 1;
  }
  if (parts.empty()) return InvalidArgument(field, "path names the root directory: " + path);
  return parts;
}

Status check_sandbox_path(const std::string& path, const std::string& field) {
  if (path.size() > 4096) return InvalidArgument(field, "path is longer than 4096 bytes");
  auto parts = split_sandbox_path(field, "/sandbox", path);
  return parts.ok() ? Status::Ok() : parts.status();
}

}  // namespace corral
