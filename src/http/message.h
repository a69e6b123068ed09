// The HTTP layer's own request and response values: what the Beast server reads off a socket
// and what Api::handle returns. Handlers work on these alone, so tests and the fuzz target
// drive them without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent ("/v1/sessions/ab/files/x%20y?mode=0755")
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool over_tcp = false;    // TCP needs the bearer token; the unix socket's mode guards it
  std::string peer;         // for rate limiting without a token ("unix", "127.0.0.1")

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Writes one chunk of a streamed body; false once the client has gone.
using StreamWriter = std::function<bool(std::string_view)>;

struct HttpResponse {
  int status = 200;
  std::map<std::string, std::string> headers;  // Content-Type included
  std::string body;
  // Set for streamed responses (Server-Sent Events): the server sends the headers, then
  // calls this with a writer for the body; `body` is unused.
  std::function<void(const StreamWriter&)> stream;
};

// {"error":{"code","message","field"}} with the status that fits `code`.
HttpResponse error_response(int status, const std::string& code, const std::string& message,
                            const std::string& field = {});
// A Status from the library as an HTTP error: invalid_argument 400, not_found 404,
// permission_denied 403, unsupported 501 (503 while the service shuts down),
// resource_exhausted 429 with Retry-After, internal 500.
HttpResponse status_response(const Status& s);
HttpResponse json_response(int status, const nlohmann::json& body);
int http_status_for(const Status& s);

// The error JSON body alone (used inside SSE error events too).
nlohmann::json error_json(const std::string& code, const std::string& message, const std::string& field);

}  // namespace corral::http
