#include "src/mcp/jsonrpc.h"

#include "src/core/json_fields.h"

namespace corral::mcp {
namespace {

using nlohmann::json;

bool has_json_type(const json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "boolean") return v.is_boolean();
  if (type == "number") return v.is_number();
  return false;
}

}  // namespace

json rpc_result(const json& id, json result) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

json rpc_error(const json& id, int code, const std::string& message, json data) {
  json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

std::optional<json> parse_message(const json& message, ParsedMessage* out) {
  if (!message.is_object()) {
    return rpc_error(nullptr, kInvalidRequest,
                     std::string("Invalid Request: a message must be a JSON object, got ") + json_type_phrase(message));
  }
  // MCP ids are strings or integers, never null.
  const auto id = message.find("id");
  const bool has_id = id != message.end();
  const bool id_ok = has_id && (id->is_string() || id->is_number_integer());
  const json reply_id = id_ok ? *id : json(nullptr);
  const auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return rpc_error(reply_id, kInvalidRequest, "Invalid Request: jsonrpc: must be \"2.0\"", {{"field", "jsonrpc"}});
  }
  const auto method = message.find("method");
  if (method == message.end()) {
    if (id_ok && (message.contains("result") || message.contains("error"))) {
      out->kind = ParsedMessage::kResponse;
      out->id = *id;
      return std::nullopt;
    }
    return rpc_error(reply_id, kInvalidRequest, "Invalid Request: method: is required", {{"field", "method"}});
  }
  if (!method->is_string()) {
    return rpc_error(reply_id, kInvalidRequest, "Invalid Request: method: must be a string", {{"field", "method"}});
  }
  if (has_id && !id_ok) {
    return rpc_error(nullptr, kInvalidRequest, "Invalid Request: id: must be a string or an integer",
                     {{"field", "id"}});
  }
  out->kind = has_id ? ParsedMessage::kRequest : ParsedMessage::kNotification;
  out->method = *method;
  out->id = reply_id;
  if (auto p = message.find("params"); p != message.end()) {
    if (!p->is_object()) {
      if (!has_id) {  // a malformed notification gets no answer, and does nothing
        out->method.clear();
        return std::nullopt;
      }
      return rpc_error(reply_id, kInvalidParams, "Invalid params: params: must be an object", {{"field", "params"}});
    }
    out->params = *p;
  }
  return std::nullopt;
}

std::optional<json> check_params(const json& params, const json& id, const std::map<std::string, std::string>& required,
                                 const std::map<std::string, std::string>& optional) {
  auto invalid = [&](const std::string& field, const std::string& what) {
    return rpc_error(id, kInvalidParams, "Invalid params: " + field + ": " + what, {{"field", field}});
  };
  auto phrase = [](const std::string& type) { return (type == "object" || type == "array" ? "an " : "a ") + type; };
  for (const auto& [name, type] : required) {
    auto it = params.find(name);
    if (it == params.end()) return invalid(name, "is required");
    if (!has_json_type(*it, type)) return invalid(name, "must be " + phrase(type));
  }
  for (const auto& [name, type] : optional) {
    auto it = params.find(name);
    if (it != params.end() && !has_json_type(*it, type)) return invalid(name, "must be " + phrase(type));
  }
  return std::nullopt;
}

}  // namespace corral::mcp
