// MCP Streamable HTTP transport (spec revisions 2025-03-26 and 2025-06-18) for /mcp: each
// POST carries one JSON-RPC message (or a batch) and is answered with application/json, or
// a one-event text/event-stream when that is all the client accepts, or 202 with no body
// for notifications and responses. An `initialize` request opens an MCP session whose id
// comes back in Mcp-Session-Id and must be sent with every later request (400 without it,
// 404 once it is unknown or ended); DELETE ends it; GET is 405 (no server-initiated stream).
// Origin headers other than localhost ones are refused (DNS rebinding).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/http/message.h"

namespace corral::http {

// One MCP connection's message handler (an McpServer's handle()).
using McpHandler = std::function<std::optional<nlohmann::json>(const nlohmann::json&)>;

struct McpTransportOptions {
  std::function<McpHandler()> new_session;  // called on each initialize
  std::vector<std::string> protocol_versions = {"2025-06-18", "2025-03-26", "2024-11-05"};
  size_t max_sessions = 256;  // beyond: the least recently used session is ended
};

class McpTransport {
 public:
  explicit McpTransport(McpTransportOptions options);
  HttpResponse handle(const HttpRequest& request);
  size_t session_count() const;

 private:
  struct Entry {
    McpHandler handler;
    std::chrono::steady_clock::time_point used;
  };
  McpTransportOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> sessions_;
};

}  // namespace corral::http
