// Request bodies of the HTTP API, read strictly: malformed JSON, unknown fields and wrong
// types are kInvalidArgument errors naming the field ("files[2].encoding", "timeout_ms").
#pragma once

#include <string>

#include "src/session/service.h"

namespace corral::http {

// Parses `body` as a JSON object; the error names the byte offset of a syntax error.
StatusOr<nlohmann::json> parse_json_object(const std::string& body);

// POST /v1/execute: {"language","code","libraries","files":[{"path","content","encoding",
// "mode"}],"stdin","timeout_ms","memory_bytes","security_preset","stream"}
struct ExecuteBody {
  ExecuteRequest request;
  bool stream = false;
};
StatusOr<ExecuteBody> parse_execute(const nlohmann::json& j);

// POST /v1/sessions: {"language","interactive","timeout_ms","memory_bytes",
// "security_preset","idle_ttl_ms"}
StatusOr<SessionRequest> parse_session(const nlohmann::json& j);

// POST /v1/sessions/{id}/run {"code","libraries","stdin","timeout_ms","stream"} and
// /command {"command","stdin","timeout_ms","stream"}.
struct RunBody {
  std::string text;  // the code or the command line
  RunOptions options;
  bool stream = false;
};
StatusOr<RunBody> parse_run(const nlohmann::json& j, bool command);

// POST /v1/sessions/{id}/install {"libraries":[...]}
StatusOr<std::vector<std::string>> parse_install(const nlohmann::json& j);

// A file path from a URL (already percent-decoded) or a body: no NUL, no '..' component.
Status check_file_path(const std::string& path, const std::string& field);

}  // namespace corral::http
