#include "src/mcp/mcp_server.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "src/mcp/jsonrpc.h"
#include "src/mcp/mcp_version.h"
#include "src/mcp/tools.h"

namespace corral::mcp {
namespace {

using nlohmann::json;

const std::vector<std::string> kVersions = {"2025-06-18", "2025-03-26", "2024-11-05"};
// Batches arrived in JSON-RPC 2.0 and left MCP in 2025-06-18.
bool version_has_batches(const std::string& v) { return v == "2025-03-26" || v == "2024-11-05"; }
// outputSchema, structuredContent and tool titles arrived in 2025-06-18.
bool version_has_structured_output(const std::string& v) { return v.empty() || v >= "2025-06-18"; }

const std::vector<std::string> kLogLevels = {"debug", "info",     "notice", "warning",
                                             "error", "critical", "alert",  "emergency"};
int log_rank(const std::string& level) {
  auto it = std::find(kLogLevels.begin(), kLogLevels.end(), level);
  return it == kLogLevels.end() ? -1 : static_cast<int>(it - kLogLevels.begin());
}

}  // namespace

struct McpServer::State {
  State(Service& service, McpOptions o) : options(std::move(o)), tools(service, options.max_read_bytes) {}

  McpOptions options;
  Tools tools;
  mutable std::mutex mu;
  std::string version;                     // negotiated; empty before initialize
  int min_log_rank = log_rank("warning");  // until the client asks for more or less
  std::map<std::string, bool> in_flight;   // request id (dumped) -> cancelled

  std::optional<json> dispatch(const json& message, bool in_batch);
  json call_method(const std::string& method, const json& params, const json& id);
  json initialize(const json& params);
  json call_tool(const json& params, const json& id);
  void log(const std::string& level, const std::string& text);
};

McpServer::McpServer(Service& service, McpOptions options)
    : state_(std::make_unique<State>(service, std::move(options))) {
  if (state_->options.server_version.empty()) state_->options.server_version = kCorralVersion;
}

McpServer::~McpServer() = default;

const std::vector<std::string>& McpServer::supported_protocol_versions() { return kVersions; }

std::string McpServer::protocol_version() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->version;
}

std::optional<json> McpServer::handle_text(std::string_view text) {
  json message;
  try {
    message = json::parse(text);
  } catch (const json::parse_error& e) {
    return rpc_error(nullptr, kParseError, std::string("Parse error: ") + e.what());
  }
  return handle(message);
}

std::optional<json> McpServer::handle(const json& message) {
  if (!message.is_array()) return state_->dispatch(message, false);
  if (message.empty()) return rpc_error(nullptr, kInvalidRequest, "Invalid Request: an empty batch");
  const std::string version = protocol_version();
  if (!version_has_batches(version)) {
    return rpc_error(nullptr, kInvalidRequest,
                     "Invalid Request: JSON-RPC batches are not part of MCP " +
                         (version.empty() ? kVersions.front() : version) +
                         " (they are in 2025-03-26 and 2024-11-05); send one message at a time");
  }
  json responses = json::array();
  for (const json& m : message) {
    if (auto r = state_->dispatch(m, true)) responses.push_back(std::move(*r));
  }
  if (responses.empty()) return std::nullopt;
  return responses;
}

std::optional<json> McpServer::State::dispatch(const json& message, bool in_batch) {
  ParsedMessage m;
  if (auto bad = parse_message(message, &m)) return bad;
  if (m.kind == ParsedMessage::kResponse) return std::nullopt;  // corral sends no requests
  if (m.kind == ParsedMessage::kNotification) {
    if (m.method == "notifications/cancelled") {
      // The result of a cancelled request is dropped; the run itself finishes within its limits.
      if (m.params.is_object() && m.params.contains("requestId")) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = in_flight.find(m.params["requestId"].dump());
        if (it != in_flight.end()) it->second = true;
      }
    }
    // notifications/initialized, progress and the rest need no answer.
    return std::nullopt;
  }
  if (in_batch && m.method == "initialize") {
    return rpc_error(m.id, kInvalidRequest, "Invalid Request: initialize must not be part of a batch");
  }
  const std::string key = m.id.dump();
  {
    std::lock_guard<std::mutex> lock(mu);
    in_flight[key] = false;
  }
  json response;
  try {
    response = call_method(m.method, m.params, m.id);
  } catch (const std::exception& e) {
    response = rpc_error(m.id, kInternalError, std::string("Internal error: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = in_flight.find(key);
  const bool cancelled = it != in_flight.end() && it->second;
  if (it != in_flight.end()) in_flight.erase(it);
  if (cancelled) return std::nullopt;
  return response;
}

json McpServer::State::call_method(const std::string& method, const json& params, const json& id) {
  if (method == "initialize") {
    if (auto bad = check_params(
            params, id, {{"protocolVersion", "string"}, {"capabilities", "object"}, {"clientInfo", "object"}})) {
      return *bad;
    }
    return rpc_result(id, initialize(params));
  }
  if (method == "ping") return rpc_result(id, json::object());
  if (method == "tools/list") {
    if (params.contains("cursor")) {
      // Every tool fits in one page, so no cursor this server handed out exists.
      return rpc_error(id, kInvalidParams, "Invalid params: cursor: unknown cursor", {{"field", "cursor"}});
    }
    std::string version;
    {
      std::lock_guard<std::mutex> lock(mu);
      version = this->version;
    }
    return rpc_result(id, {{"tools", tools.list(version_has_structured_output(version))}});
  }
  if (method == "tools/call") return call_tool(params, id);
  if (method == "logging/setLevel") {
    if (!params.contains("level")) {
      return rpc_error(id, kInvalidParams, "Invalid params: level: is required", {{"field", "level"}});
    }
    const int rank = params["level"].is_string() ? log_rank(params["level"]) : -1;
    if (rank < 0) {
      return rpc_error(id, kInvalidParams,
                       "Invalid params: level: must be one of debug, info, notice, warning, error, critical, "
                       "alert, emergency",
                       {{"field", "level"}});
    }
    std::lock_guard<std::mutex> lock(mu);
    min_log_rank = rank;
    return rpc_result(id, json::object());
  }
  return rpc_error(id, kMethodNotFound, "Method not found: " + method.substr(0, 100));
}

json McpServer::State::initialize(const json& params) {
  const std::string requested = params["protocolVersion"];
  // The client's version when corral speaks it, else corral's newest; the client decides
  // whether it can go on with that.
  const bool known = std::find(kVersions.begin(), kVersions.end(), requested) != kVersions.end();
  const std::string agreed = known ? requested : kVersions.front();
  {
    std::lock_guard<std::mutex> lock(mu);
    version = agreed;
  }
  return {{"protocolVersion", agreed},
          {"capabilities", {{"tools", {{"listChanged", false}}}, {"logging", json::object()}}},
          {"serverInfo", {{"name", options.server_name}, {"version", options.server_version}}},
          {"instructions",
           "corral runs code in isolated sandboxes without network access. Use execute_code for one-off runs; "
           "create_session + run_in_session when files must persist between runs (destroy_session when done). "
           "Figures drawn with matplotlib or R come back as images; files written to /sandbox/out come back "
           "with the result."}};
}

json McpServer::State::call_tool(const json& params, const json& id) {
  if (auto bad = check_params(params, id, {{"name", "string"}}, {{"arguments", "object"}})) return *bad;
  const json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  ToolContext ctx;
  {
    std::lock_guard<std::mutex> lock(mu);
    ctx.structured = version_has_structured_output(version);
  }
  ctx.log = [this](const std::string& level, const std::string& text) { log(level, text); };
  auto result = tools.call(params["name"], arguments, ctx);
  if (!result.ok()) {
    const Status& s = result.status();
    return rpc_error(id, kInvalidParams, "Invalid params: " + s.to_string(), {{"field", s.field()}});
  }
  return rpc_result(id, std::move(result).value());
}

void McpServer::State::log(const std::string& level, const std::string& text) {
  if (!options.notify) return;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (log_rank(level) < min_log_rank) return;
  }
  options.notify({{"jsonrpc", "2.0"},
                  {"method", "notifications/message"},
                  {"params", {{"level", level}, {"logger", "corral"}, {"data", text}}}});
}

std::string to_wire(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace corral::mcp
