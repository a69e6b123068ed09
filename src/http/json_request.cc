#include "src/http/json_request.h"

#include "src/core/json_fields.h"
#include "src/core/sandbox_path.h"

namespace corral::http {
namespace {

constexpr uint64_t kMaxMs = 24ull * 3600 * 1000;

void read_limits(JsonFields& f, RequestLimits* limits) {
  uint64_t v = 0;
  if (f.child("timeout_ms") && !f.child("timeout_ms")->is_null()) {
    f.u64("timeout_ms", &v, 1, kMaxMs);
    limits->timeout_ms = v;
  }
  if (f.child("memory_bytes") && !f.child("memory_bytes")->is_null()) {
    f.u64("memory_bytes", &v, 1, UINT64_MAX);
    limits->memory_bytes = v;
  }
  if (f.child("security_preset") && !f.child("security_preset")->is_null()) {
    std::string s;
    f.string("security_preset", &s);
    limits->security_preset = s;
  }
}

Status require_string(JsonFields& f, const nlohmann::json& j, const char* key, std::string* out) {
  if (!j.is_object() || !j.contains(key)) return InvalidArgument(key, "is required");
  f.string(key, out);
  return Status::Ok();
}

}  // namespace

StatusOr<nlohmann::json> parse_json_object(const std::string& body) {
  if (body.empty()) return InvalidArgument("body", "a JSON object is required, the body is empty");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidArgument("body", "malformed JSON at byte " + std::to_string(e.byte));
  } catch (const std::exception&) {
    return InvalidArgument("body", "malformed JSON");
  }
  if (!j.is_object()) return InvalidArgument("body", std::string("must be a JSON object, got ") + json_type_phrase(j));
  return j;
}

Status check_file_path(const std::string& path, const std::string& field) { return check_sandbox_path(path, field); }

StatusOr<ExecuteBody> parse_execute(const nlohmann::json& j) {
  ExecuteBody out;
  JsonFields f(j, "");
  RETURN_IF_ERROR(require_string(f, j, "language", &out.request.language));
  RETURN_IF_ERROR(require_string(f, j, "code", &out.request.code));
  f.string_list("libraries", &out.request.libraries);
  f.string("stdin", &out.request.stdin_data);
  f.boolean("stream", &out.stream);
  read_limits(f, &out.request.limits);
  if (const nlohmann::json* files = f.child("files")) {
    if (!files->is_array()) {
      f.fail(InvalidArgument("files", std::string("must be an array, got ") + json_type_phrase(*files)));
    } else {
      for (size_t i = 0; i < files->size(); ++i) {
        const std::string name = "files[" + std::to_string(i) + "]";
        JsonFields ff((*files)[i], name);
        FileEntry e;
        std::string content, encoding = "utf-8";
        uint64_t mode = 0644;
        if (!(*files)[i].is_object() || !(*files)[i].contains("path")) {
          ff.fail(InvalidArgument(name + ".path", "is required"));
        }
        ff.string("path", &e.path);
        ff.string("content", &content);
        ff.string("encoding", &encoding);
        ff.u64("mode", &mode, 0, 07777);
        RETURN_IF_ERROR(ff.finish());
        RETURN_IF_ERROR(check_file_path(e.path, name + ".path"));
        if (encoding == "base64") {
          auto raw = base64_decode(content);
          if (!raw.ok()) return InvalidArgument(name + ".content", "is not valid base64");
          e.data = std::move(raw).value();
        } else if (encoding == "utf-8" || encoding == "utf8") {
          e.data = std::move(content);
        } else {
          return InvalidArgument(name + ".encoding", "must be \"utf-8\" or \"base64\"");
        }
        e.mode = static_cast<uint32_t>(mode);
        out.request.files.push_back(std::move(e));
      }
    }
  }
  RETURN_IF_ERROR(f.finish());
  return out;
}

StatusOr<SessionRequest> parse_session(const nlohmann::json& j) {
  SessionRequest out;
  JsonFields f(j, "");
  RETURN_IF_ERROR(require_string(f, j, "language", &out.language));
  f.boolean("interactive", &out.interactive);
  read_limits(f, &out.limits);
  if (f.child("idle_ttl_ms") && !f.child("idle_ttl_ms")->is_null()) {
    uint64_t v = 0;
    f.u64("idle_ttl_ms", &v, 1, kMaxMs);
    out.idle_ttl_ms = v;
  }
  RETURN_IF_ERROR(f.finish());
  return out;
}

StatusOr<RunBody> parse_run(const nlohmann::json& j, bool command) {
  RunBody out;
  JsonFields f(j, "");
  RETURN_IF_ERROR(require_string(f, j, command ? "command" : "code", &out.text));
  if (!command) f.string_list("libraries", &out.options.libraries);
  f.string("stdin", &out.options.stdin_data);
  f.boolean("stream", &out.stream);
  if (f.child("timeout_ms") && !f.child("timeout_ms")->is_null()) {
    uint64_t v = 0;
    f.u64("timeout_ms", &v, 1, kMaxMs);
    out.options.timeout_ms = v;
  }
  RETURN_IF_ERROR(f.finish());
  return out;
}

StatusOr<std::vector<std::string>> parse_install(const nlohmann::json& j) {
  std::vector<std::string> libs;
  JsonFields f(j, "");
  if (!j.contains("libraries")) return InvalidArgument("libraries", "is required");
  f.string_list("libraries", &libs);
  RETURN_IF_ERROR(f.finish());
  if (libs.empty()) return InvalidArgument("libraries", "must name at least one library");
  return libs;
}

}  // namespace corral::http
