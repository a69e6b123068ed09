#include "src/http/mcp_transport.h"

#include <sys/random.h>

#include <algorithm>

namespace corral::http {
namespace {

std::optional<std::string> random_hex16() {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = getrandom(b + got, sizeof b - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) out += hex[c >> 4], out += hex[c & 15];
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A JSON-RPC error as the HTTP body (id null: it answers no particular request).
HttpResponse rpc_error(int http_status, int code, const std::string& message) {
  return json_response(http_status,
                       {{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", code}, {"message", message}}}});
}

// Origin must name this machine: a web page elsewhere must not drive a local server.
bool origin_allowed(const std::string& origin) {
  if (origin.empty() || origin == "null") return origin.empty();
  const std::string o = lower(origin);
  for (const char* host : {"localhost", "127.0.0.1", "[::1]"}) {
    for (const char* scheme : {"http://", "https://"}) {
      const std::string base = std::string(scheme) + host;
      if (o == base || o.rfind(base + ":", 0) == 0) return true;
    }
  }
  return false;
}

bool is_initialize(const nlohmann::json& m) {
  auto one = [](const nlohmann::json& x) {
    return x.is_object() && x.contains("method") && x["method"] == "initialize";
  };
  if (one(m)) return true;
  return m.is_array() && std::any_of(m.begin(), m.end(), one);
}

}  // namespace

McpTransport::McpTransport(McpTransportOptions options) : options_(std::move(options)) {}

size_t McpTransport::session_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

HttpResponse McpTransport::handle(const HttpRequest& req) {
  if (!origin_allowed(req.header("origin"))) {
    return rpc_error(403, -32000, "Forbidden: Origin '" + req.header("origin").substr(0, 100) + "' is not allowed");
  }
  const std::string sid = req.header("mcp-session-id");
  if (req.method == "GET") {
    HttpResponse r = rpc_error(405, -32000, "Method Not Allowed: this server offers no GET stream; POST messages");
    r.headers["Allow"] = "POST, DELETE";
    return r;
  }
  if (req.method == "DELETE") {
    if (sid.empty()) return rpc_error(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    std::shared_ptr<Entry> gone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(sid);
      if (it == sessions_.end()) return rpc_error(404, -32001, "Session not found");
      gone = std::move(it->second);
      sessions_.erase(it);
    }
    HttpResponse r;
    r.status = 200;
    return r;
  }
  if (req.method != "POST") {
    HttpResponse r = rpc_error(405, -32000, "Method Not Allowed");
    r.headers["Allow"] = "POST, DELETE";
    return r;
  }
  // The client must accept JSON or an event stream (the spec has it list both).
  const std::string accept = lower(req.header("accept"));
  const bool wants_json = accept.find("application/json") != std::string::npos ||
                          accept.find("*/*") != std::string::npos || accept.find("application/*") != std::string::npos;
  const bool wants_sse = accept.find("text/event-stream") != std::string::npos;
  if (!wants_json && !wants_sse) {
    return rpc_error(406, -32000, "Not Acceptable: Accept must list application/json and text/event-stream");
  }
  const std::string ctype = lower(req.header("content-type"));
  if (!ctype.empty() && ctype.rfind("application/json", 0) != 0) {
    return rpc_error(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
  }
  nlohmann::json message = nlohmann::json::parse(req.body, nullptr, false);
  if (message.is_discarded()) return rpc_error(400, -32700, "Parse error: the body is not valid JSON");
  if (!message.is_object() && !(message.is_array() && !message.empty())) {
    return rpc_error(400, -32600, "Invalid Request: expected a JSON-RPC message object");
  }
  const std::string version = req.header("mcp-protocol-version");
  if (!version.empty() &&
      std::find(options_.protocol_versions.begin(), options_.protocol_versions.end(), version) ==
          options_.protocol_versions.end()) {
    return rpc_error(400, -32000, "Bad Request: unsupported MCP-Protocol-Version '" + version.substr(0, 40) + "'");
  }

  std::shared_ptr<Entry> entry;
  std::string assigned;
  if (is_initialize(message)) {
    if (!options_.new_session) return rpc_error(500, -32603, "MCP is not available on this server");
    auto id = random_hex16();
    if (!id) return rpc_error(500, -32603, "cannot generate a session id");
    entry = std::make_shared<Entry>();
    entry->handler = options_.new_session();
    entry->used = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (sessions_.size() >= options_.max_sessions) {
      auto lru = std::min_element(sessions_.begin(), sessions_.end(),
                                  [](const auto& a, const auto& b) { return a.second->used < b.second->used; });
      sessions_.erase(lru);
    }
    sessions_[*id] = entry;
    assigned = *id;
  } else {
    if (sid.empty()) return rpc_error(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(sid);
    if (it == sessions_.end()) return rpc_error(404, -32001, "Session not found");
    entry = it->second;
    entry->used = std::chrono::steady_clock::now();
  }

  std::optional<nlohmann::json> reply = entry->handler(message);
  HttpResponse r;
  if (!reply) {
    r.status = 202;
  } else if (wants_json) {
    r = json_response(200, *reply);
  } else {
    r.status = 200;
    r.headers["Content-Type"] = "text/event-stream";
    r.headers["Cache-Control"] = "no-cache";
    r.body = "event: message\ndata: " + reply->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
  }
  if (!assigned.empty()) r.headers["Mcp-Session-Id"] = assigned;
  return r;
}

}  // namespace corral::http
