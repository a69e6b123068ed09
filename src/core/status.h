// Errors as values. Every failure names the step that failed, the path or field involved,
// and the errno when there is one, so a caller can print one line that explains it.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace corral {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,    // bad input from the caller (policy, request, CLI flag)
  kNotFound,           // a named thing (file, sandbox, language) does not exist
  kPermissionDenied,   // the host refused (not root, EPERM from the kernel)
  kUnsupported,        // the host or backend cannot do what was asked
  kResourceExhausted,  // a limit was hit (uid slots, fds, memory)
  kInternal,           // a syscall or library failed unexpectedly
};

const char* error_code_name(ErrorCode code);

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message, std::string field = {}, int err = 0)
      : code_(code), message_(std::move(message)), field_(std::move(field)), errno_(err) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The policy field, request field or path the error is about (may be empty).
  const std::string& field() const { return field_; }
  int sys_errno() const { return errno_; }

  // "field: message: strerror(errno)" in one line.
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::string field_;
  int errno_ = 0;
};

inline Status InvalidArgument(std::string field, std::string message) {
  return Status(ErrorCode::kInvalidArgument, std::move(message), std::move(field));
}
inline Status Unsupported(std::string message, std::string field = {}) {
  return Status(ErrorCode::kUnsupported, std::move(message), std::move(field));
}
inline Status Internal(std::string message) {
  return Status(ErrorCode::kInternal, std::move(message));
}
// A failed syscall: `step` says what corral was doing, `path` what it was done to.
Status SysError(std::string step, int err, std::string path = {});
inline Status SysError(std::string step, std::string path = {}) {
  return SysError(std::move(step), errno, std::move(path));
}

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace corral

#define CORRAL_CONCAT_INNER(a, b) a##b
#define CORRAL_CONCAT(a, b) CORRAL_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::corral::Status _st = (expr);            \
    if (!_st.ok()) return _st;                \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(CORRAL_CONCAT(_status_or_, __LINE__), lhs, expr)
