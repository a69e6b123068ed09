#include "src/mcp/content.h"

#include <cstdio>

namespace corral::mcp {
namespace {

bool is_image(const std::string& mime) { return mime.rfind("image/", 0) == 0; }

bool is_text_mime(const std::string& mime) {
  return mime.rfind("text/", 0) == 0 || mime == "application/json" || mime == "application/xml" ||
         mime == "image/svg+xml" || mime == "application/javascript";
}

std::string resource_uri(const std::string& path) {
  // A URI of corral's own scheme: a file:// URI would suggest the host's file system.
  return "sandbox://" + (path.empty() || path[0] != '/' ? "/" + path : path);
}

std::string ms(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, v < 10 ? "%.1f ms" : "%.0f ms", v);
  return buf;
}

// Program output may be any bytes; JSON text must be UTF-8, so bad sequences become U+FFFD
// here, whichever way a transport serialises the message afterwards.
std::string utf8_or_replaced(const std::string& s) {
  if (is_utf8(s)) return s;
  return nlohmann::json::parse(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

void append_stream(std::string& out, const char* name, const std::string& data, bool truncated) {
  if (data.empty() && !truncated) return;
  out += "\n--- ";
  out += name;
  out += truncated ? " (truncated) ---\n" : " ---\n";
  out += utf8_or_replaced(data);
  if (!data.empty() && data.back() != '\n') out += '\n';
}

}  // namespace

bool is_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = s[i];
    size_t len = 0;
    if (c < 0x80)
      len = 1;
    else if (c >= 0xc2 && c <= 0xdf)
      len = 2;
    else if ((c & 0xf0) == 0xe0)
      len = 3;
    else if (c >= 0xf0 && c <= 0xf4)
      len = 4;
    else
      return false;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

std::string exec_summary(const ExecResult& r) {
  std::string out = "status: ";
  out += exec_status_name(r.status());
  if (r.exit_code >= 0) out += ", exit code " + std::to_string(r.exit_code);
  if (r.signal) out += ", signal " + std::to_string(r.signal);
  if (!r.stage.empty() && r.stage != "run") out += ", in the " + r.stage + " step";
  out += ", " + ms(r.usage.wall_ms);
  if (!r.message.empty()) out += "\nmessage: " + utf8_or_replaced(r.message);
  append_stream(out, "stdout", r.stdout_data, r.stdout_truncated);
  append_stream(out, "stderr", r.stderr_data, r.stderr_truncated);
  if (!r.artifacts.empty()) {
    out += "\n--- files produced ---\n";
    for (const Artifact& a : r.artifacts) {
      out += a.path + " (" + a.mime + ", " + std::to_string(a.size) + " bytes" +
             (a.truncated ? ", too large to return" : "") + ")\n";
    }
  }
  return out;
}

nlohmann::json file_content(const std::string& path, const std::string& mime, const std::string& bytes) {
  // SVG too: clients that render images render it; image content always carries base64.
  if (is_image(mime)) return {{"type", "image"}, {"data", base64_encode(bytes)}, {"mimeType", mime}};
  nlohmann::json resource = {{"uri", resource_uri(path)}, {"mimeType", mime}};
  if (is_text_mime(mime) && is_utf8(bytes)) {
    resource["text"] = bytes;
  } else {
    resource["blob"] = base64_encode(bytes);
  }
  return {{"type", "resource"}, {"resource", resource}};
}

nlohmann::json exec_tool_result(const ExecResult& r, bool structured) {
  nlohmann::json content = nlohmann::json::array();
  content.push_back({{"type", "text"}, {"text", exec_summary(r)}});
  for (const Artifact& a : r.artifacts) {
    if (a.truncated) continue;
    content.push_back(file_content(a.path, a.mime, a.bytes));
  }
  nlohmann::json out = {{"content", content}, {"isError", r.status() != ExecStatus::kOk}};
  if (structured) {
    nlohmann::json s = r.to_json();
    for (auto& a : s["artifacts"]) a.erase("bytes");  // the bytes travel once, as content
    out["structuredContent"] = std::move(s);
  }
  return out;
}

nlohmann::json exec_output_schema() {
  static const nlohmann::json schema = nlohmann::json::parse(R"({
    "type": "object",
    "properties": {
      "status": {"type": "string", "enum": ["ok", "nonzero_exit", "signaled", "timeout", "oom", "output_limit",
                 "seccomp_violation", "policy_violation", "setup_error", "internal_error"],
                 "description": "What happened; ok means exit code 0"},
      "exit_code": {"type": "integer", "description": "-1 when the program did not exit normally"},
      "signal": {"type": "integer"},
      "message": {"type": "string", "description": "Detail for statuses other than ok"},
      "stage": {"type": "string", "description": "install, compile or run: the step this is the result of"},
      "stdout": {"type": "string"},
      "stderr": {"type": "string"},
      "stdout_truncated": {"type": "boolean"},
      "stderr_truncated": {"type": "boolean"},
      "usage": {"type": "object", "properties": {
        "wall_ms": {"type": "number"}, "cpu_user_ms": {"type": "number"}, "cpu_sys_ms": {"type": "number"},
        "peak_memory_bytes": {"type": "integer"}}},
      "artifacts": {"type": "array", "description": "Figures and files written to /sandbox/out; their bytes are in content",
        "items": {"type": "object", "properties": {
          "path": {"type": "string"}, "name": {"type": "string"}, "mime": {"type": "string"},
          "size": {"type": "integer"}, "truncated": {"type": "boolean"},
          "width": {"type": "integer"}, "height": {"type": "integer"}}}}
    },
    "required": ["status", "exit_code", "stdout", "stderr", "usage", "artifacts"]
  })");
  return schema;
}

nlohmann::json text_tool_result(const std::string& text, bool is_error) {
  return {{"content", nlohmann::json::array({{{"type", "text"}, {"text", text}}})}, {"isError", is_error}};
}

}  // namespace corral::mcp
