#include "src/http/message.h"

#include <cstring>

namespace corral::http {

nlohmann::json error_json(const std::string& code, const std::string& message, const std::string& field) {
  return {{"error", {{"code", code}, {"message", message}, {"field", field}}}};
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse r;
  r.status = status;
  r.headers["Content-Type"] = "application/json";
  // Output from sandboxes may be any bytes: invalid UTF-8 is replaced, never thrown on.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.body += '\n';
  return r;
}

HttpResponse error_response(int status, const std::string& code, const std::string& message,
                            const std::string& field) {
  return json_response(status, error_json(code, message, field));
}

int http_status_for(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk: return 200;
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kPermissionDenied: return 403;
    case ErrorCode::kUnsupported: return s.field() == "service" ? 503 : 501;
    case ErrorCode::kResourceExhausted: return 429;
    case ErrorCode::kInternal: return 500;
  }
  return 500;
}

HttpResponse status_response(const Status& s) {
  const int status = http_status_for(s);
  std::string code = error_code_name(s.code());
  if (status == 503) code = "shutting_down";
  std::string message = s.message();
  if (s.sys_errno()) message.append(": ").append(strerror(s.sys_errno()));
  // A session that closed under a call names itself "session"; the API's name is session_id.
  HttpResponse r = error_response(status, code, message, s.field() == "session" ? "session_id" : s.field());
  if (status == 429 || status == 503) r.headers.emplace("Retry-After", "1");
  return r;
}

}  // namespace corral::http
