// The tools corral offers over MCP, each with its JSON schemas, and how a call runs on
// Service: execute_code, create_session, run_in_session, destroy_session, upload_file,
// read_file, list_languages, get_language_details.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/session/service.h"

namespace corral::mcp {

struct ToolContext {
  bool structured = true;  // protocol 2025-06-18+: outputSchema, structuredContent, title
  // A log record for the client ("info", "warning", ...); never null.
  std::function<void(const std::string& level, const std::string& text)> log;
};

class Tools {
 public:
  Tools(Service& service, uint64_t max_read_bytes);

  // The tools/list result's "tools" array.
  nlohmann::json list(bool structured) const;
  // A tools/call result. An unknown tool, or arguments that break the tool's schema or the
  // service's request rules, is kInvalidArgument naming the field (answered with -32602);
  // anything that fails while the tool runs comes back as an isError result.
  StatusOr<nlohmann::json> call(const std::string& name, const nlohmann::json& arguments, const ToolContext& ctx);

 private:
  using Run = StatusOr<nlohmann::json> (Tools::*)(const nlohmann::json& args, const ToolContext& ctx);
  struct Tool {
    std::string name, title, description;
    nlohmann::json input_schema, output_schema, annotations;
    Run run;
  };

  StatusOr<nlohmann::json> execute_code(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> create_session(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> run_in_session(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> destroy_session(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> upload_file(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> read_file(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> list_languages(const nlohmann::json& args, const ToolContext& ctx);
  StatusOr<nlohmann::json> get_language_details(const nlohmann::json& args, const ToolContext& ctx);

  Service& service_;
  uint64_t max_read_bytes_;
  std::vector<Tool> tools_;
};

}  // namespace corral::mcp
