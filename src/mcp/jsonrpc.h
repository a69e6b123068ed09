// JSON-RPC 2.0 as MCP uses it: message classification and validation, and the shapes of
// results and errors (standard codes; an error about one field names it in data.field).
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

struct ParsedMessage {
  enum Kind { kRequest, kNotification, kResponse } kind = kRequest;
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // {} when absent
  nlohmann::json id;                                 // requests only: a string or an integer
};

// Classifies `message`; returns the error response to send when it is not valid JSON-RPC
// (-32600 invalid request; -32602 when params is not an object).
std::optional<nlohmann::json> parse_message(const nlohmann::json& message, ParsedMessage* out);

nlohmann::json rpc_result(const nlohmann::json& id, nlohmann::json result);
nlohmann::json rpc_error(const nlohmann::json& id, int code, const std::string& message,
                         nlohmann::json data = nullptr);

// Checks that `params` has each `required` member and, where present, each `optional` one
// with the JSON type named ("string", "object", ...). Returns the -32602 error response
// naming the field, or nullopt when they are fine. Other members (_meta, ...) are allowed.
std::optional<nlohmann::json> check_params(const nlohmann::json& params, const nlohmann::json& id,
                                           const std::map<std::string, std::string>& required,
                                           const std::map<std::string, std::string>& optional = {});

}  // namespace corral::mcp
