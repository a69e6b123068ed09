// How corral's results become MCP tool results: a short text summary for the model, the
// ExecResult fields as structuredContent (artifact bytes left out there), every image the
// run produced as image content and other output files as embedded resources.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "src/core/exec_result.h"

namespace corral::mcp {

// {"content": [...], "structuredContent": {...}, "isError": status != ok}.
// `structured` false (protocol versions before 2025-06-18): no structuredContent.
nlohmann::json exec_tool_result(const ExecResult& result, bool structured);
// The outputSchema of exec_tool_result's structuredContent.
nlohmann::json exec_output_schema();

// A tool result that is only text; isError when `is_error`.
nlohmann::json text_tool_result(const std::string& text, bool is_error = false);

// The text summary alone: "status: ok, exit code 0, 23 ms" then stdout, stderr, artifacts.
std::string exec_summary(const ExecResult& result);

// Content for one file's bytes: image content for images, else text (valid UTF-8 text) or
// an embedded resource with a base64 blob. `path` names it in the resource URI.
nlohmann::json file_content(const std::string& path, const std::string& mime, const std::string& bytes);
bool is_utf8(const std::string& s);

}  // namespace corral::mcp
