#include "src/core/status.h"

#include <cstring>

namespace corral {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kPermissionDenied: return "permission_denied";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  std::string out;
  if (!field_.empty()) out = field_ + ": ";
  out += message_;
  if (errno_ != 0) {
    out += ": ";
    out += std::strerror(errno_);
  }
  return out;
}

Status SysError(std::string step, int err, std::string path) {
  ErrorCode code = ErrorCode::kInternal;
  if (err == EPERM || err == EACCES) code = ErrorCode::kPermissionDenied;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  if (err == ENOSYS || err == EOPNOTSUPP) code = ErrorCode::kUnsupported;
  return Status(code, std::move(step), std::move(path), err);
}

}  // namespace corral
