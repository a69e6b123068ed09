// McpServer: corral as a Model Context Protocol server — the tools an agent uses to run code
// (execute_code, sessions, files, languages) on top of Service. It speaks JSON-RPC messages
// and nothing else: `corral mcp` carries them over stdio, `corral serve` over Streamable HTTP
// at /mcp. Protocol versions 2025-06-18, 2025-03-26 and 2024-11-05 are negotiated.
//
// Thread-safe: handle() may run concurrently (a long tools/call while a ping is answered).
// The negotiated version and log level belong to the instance, so a transport that carries
// several MCP connections keeps one McpServer per connection.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/session/service.h"

namespace corral::mcp {

struct McpOptions {
  std::string server_name = "corral";
  std::string server_version;  // empty: corral's own version
  // Server-to-client notifications (notifications/message log records at or above the level
  // the client set with logging/setLevel). Called on the thread running handle(); null: none.
  std::function<void(const nlohmann::json&)> notify;
  uint64_t max_read_bytes = 16ull << 20;  // read_file refuses larger files
};

class McpServer {
 public:
  explicit McpServer(Service& service, McpOptions options = {});
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // One JSON-RPC message: a request, a notification, a response from the client, or a batch
  // (an array; only where the negotiated version has batches). Returns the response, or
  // nullopt when there is nothing to send back (notifications, responses, a request the
  // client cancelled, a batch of notifications).
  std::optional<nlohmann::json> handle(const nlohmann::json& message);
  // The same for raw text (one stdio line, one HTTP body): malformed JSON is answered with a
  // -32700 parse error.
  std::optional<nlohmann::json> handle_text(std::string_view text);

  // The version agreed in the last initialize; empty before one.
  std::string protocol_version() const;
  static const std::vector<std::string>& supported_protocol_versions();  // newest first

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A message serialised for the wire: one line, no raw newlines, invalid UTF-8 replaced.
std::string to_wire(const nlohmann::json& message);

}  // namespace corral::mcp
