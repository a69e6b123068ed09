#include "src/mcp/tools.h"

#include <cmath>

#include "src/lang/artifacts.h"
#include "src/lang/language.h"
#include "src/mcp/content.h"
#include "src/mcp/schema_check.h"

namespace corral::mcp {
namespace {

using nlohmann::json;

// The service names request fields after its own structs; the client knows the tool's names.
std::string argument_name(const std::string& field) {
  if (field == "timeout_ms") return "timeout";
  if (field == "stdin_data") return "stdin";
  return field;
}

// What a failed service call becomes: a bad request is the caller's (-32602, naming the
// argument); anything else is the tool failing, which the model reads as an isError result.
StatusOr<json> failure(const Status& s, const ToolContext& ctx, const std::string& tool) {
  const bool bad_library = s.code() == ErrorCode::kNotFound && s.field().rfind("libraries", 0) == 0;
  if (s.code() == ErrorCode::kInvalidArgument || bad_library) {
    return InvalidArgument(argument_name(s.field()), s.message());
  }
  // A session that is gone is the caller's news, not a server problem.
  const char* level = s.code() == ErrorCode::kInternal   ? "error"
                      : s.code() == ErrorCode::kNotFound ? "info"
                                                         : "warning";
  ctx.log(level, tool + ": " + s.to_string());
  return text_tool_result(tool + " failed: " + s.to_string(), true);
}

json with_structured(json result, json structured, const ToolContext& ctx) {
  if (ctx.structured) result["structuredContent"] = std::move(structured);
  return result;
}

uint64_t seconds_to_ms(double s) { return static_cast<uint64_t>(std::ceil(s * 1000.0)); }

std::string language_description() {
  return "Programming language: one of " + lang::language_names() +
         " (aliases such as py, js, node, c++, golang also work). list_languages shows what this host can run.";
}

json session_id_schema() {
  return {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}, {"description", "The id create_session returned"}};
}

json object_schema(json properties, json required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

}  // namespace

Tools::Tools(Service& service, uint64_t max_read_bytes) : service_(service), max_read_bytes_(max_read_bytes) {
  const double max_timeout_s = static_cast<double>(service.options().max_timeout_ms) / 1000.0;
  const json timeout = {{"type", "number"},
                        {"exclusiveMinimum", 0},
                        {"maximum", max_timeout_s},
                        {"description", "Wall-clock limit of the run in seconds (the server's default if omitted)"}};
  const json code = {
      {"type", "string"}, {"minLength", 1}, {"maxLength", 1 << 24}, {"description", "The source code to run"}};
  const json language = {{"type", "string"}, {"minLength", 1}, {"description", language_description()}};
  const json path = {{"type", "string"},
                     {"minLength", 1},
                     {"maxLength", 4096},
                     {"description",
                      "Path inside the sandbox; relative paths are relative to the working "
                      "directory /sandbox"}};
  const json session_result = object_schema({{"session_id", {{"type", "string"}}},
                                             {"language", {{"type", "string"}}},
                                             {"interactive", {{"type", "boolean"}}}},
                                            {"session_id", "language"});
  const json read_only = {{"readOnlyHint", true}, {"openWorldHint", false}};
  const json runs_code = {{"readOnlyHint", false}, {"destructiveHint", false}, {"openWorldHint", false}};

  tools_.push_back(
      {"execute_code", "Execute code",
       "Runs code in a fresh isolated sandbox (no network) and returns stdout, stderr, the exit status and "
       "resource usage. Figures (matplotlib, R plots) come back as images, files written to /sandbox/out as "
       "resources. Nothing persists between calls: use create_session for that.",
       object_schema({{"code", code},
                      {"language", language},
                      {"libraries",
                       {{"type", "array"},
                        {"items", {{"type", "string"}, {"minLength", 1}}},
                        {"maxItems", 64},
                        {"description",
                         "Packages to install first, by name (e.g. \"requests\"); they come from "
                         "the server's local library directory, never the network"}}},
                      {"timeout", timeout},
                      {"stdin", {{"type", "string"}, {"description", "Standard input for the program"}}}},
                     {"code", "language"}),
       exec_output_schema(), runs_code, &Tools::execute_code});
  tools_.push_back(
      {"create_session",
       "Create a session",
       "Creates a sandbox that lives across calls: files written by one run_in_session call are there for the "
       "next. Returns its session_id. Close it with destroy_session when done (idle sessions expire).",
       object_schema({{"language", language},
                      {"interactive",
                       {{"type", "boolean"},
                        {"description",
                         "Keep interpreter state (variables, imports) across runs where the "
                         "language supports it"}}}},
                     {"language"}),
       session_result,
       {{"readOnlyHint", false}, {"openWorldHint", false}},
       &Tools::create_session});
  tools_.push_back({"run_in_session", "Run code in a session",
                    "Runs code in an existing session's sandbox (its language), keeping the files earlier runs "
                    "wrote. Returns the same result as execute_code.",
                    object_schema({{"session_id", session_id_schema()}, {"code", code}, {"timeout", timeout}},
                                  {"session_id", "code"}),
                    exec_output_schema(), runs_code, &Tools::run_in_session});
  tools_.push_back(
      {"destroy_session",
       "Destroy a session",
       "Destroys a session's sandbox and everything in it.",
       object_schema({{"session_id", session_id_schema()}}, {"session_id"}),
       object_schema({{"session_id", {{"type", "string"}}}, {"destroyed", {{"type", "boolean"}}}},
                     {"session_id", "destroyed"}),
       {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
       &Tools::destroy_session});
  tools_.push_back(
      {"upload_file",
       "Upload a file to a session",
       "Writes a file into a session's sandbox (parent directories are created).",
       object_schema({{"session_id", session_id_schema()},
                      {"path", path},
                      {"content", {{"type", "string"}, {"description", "The file's content"}}},
                      {"encoding",
                       {{"type", "string"},
                        {"enum", {"utf-8", "base64"}},
                        {"description", "How content is encoded: utf-8 text (default) or base64 for binary files"}}}},
                     {"session_id", "path", "content"}),
       object_schema({{"path", {{"type", "string"}}}, {"size", {{"type", "integer"}}}}, {"path", "size"}),
       {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
       &Tools::upload_file});
  tools_.push_back({"read_file", "Read a file from a session",
                    "Reads a regular file from a session's sandbox: text comes back as text, images as images, other "
                    "binary files as base64.",
                    object_schema({{"session_id", session_id_schema()}, {"path", path}}, {"session_id", "path"}),
                    object_schema({{"path", {{"type", "string"}}},
                                   {"size", {{"type", "integer"}}},
                                   {"mime", {{"type", "string"}}},
                                   {"encoding", {{"type", "string"}, {"enum", {"utf-8", "base64"}}}},
                                   {"content", {{"type", "string"}}}},
                                  {"path", "size", "mime", "encoding", "content"}),
                    read_only, &Tools::read_file});
  const json language_entry = {{"type", "object"},
                               {"properties",
                                {{"name", {{"type", "string"}}},
                                 {"aliases", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                                 {"version", {{"type", "string"}}},
                                 {"available", {{"type", "boolean"}}},
                                 {"compiled", {{"type", "boolean"}}},
                                 {"file", {{"type", "string"}}}}},
                               {"required", {"name", "available"}}};
  tools_.push_back({"list_languages", "List languages",
                    "Lists the languages corral knows, with the version installed on this host and whether it "
                    "is available.",
                    object_schema(json::object(), json::array()),
                    object_schema({{"languages", {{"type", "array"}, {"items", language_entry}}}}, {"languages"}),
                    read_only, &Tools::list_languages});
  json details = language_entry;
  details["properties"]["libraries"] = {{"type", "boolean"}};
  details["properties"]["binary"] = {{"type", "string"}};
  details["properties"]["seccomp_profile"] = {{"type", "string"}};
  tools_.push_back({"get_language_details", "Language details",
                    "Details of one language: version, aliases, whether it is compiled, the file the code is "
                    "written to, whether libraries can be installed.",
                    object_schema({{"language", language}}, {"language"}), details, read_only,
                    &Tools::get_language_details});
}

json Tools::list(bool structured) const {
  json out = json::array();
  for (const Tool& t : tools_) {
    json annotations = t.annotations;
    annotations["title"] = t.title;
    json j = {{"name", t.name},
              {"description", t.description},
              {"inputSchema", t.input_schema},
              {"annotations", annotations}};
    if (structured) {
      j["title"] = t.title;
      j["outputSchema"] = t.output_schema;
    }
    out.push_back(std::move(j));
  }
  return out;
}

StatusOr<json> Tools::call(const std::string& name, const json& arguments, const ToolContext& ctx) {
  for (const Tool& t : tools_) {
    if (t.name != name) continue;
    RETURN_IF_ERROR(check_against_schema(arguments, t.input_schema));
    return (this->*t.run)(arguments, ctx);
  }
  std::string names;
  for (const Tool& t : tools_) names += (names.empty() ? "" : ", ") + t.name;
  return InvalidArgument("name", "unknown tool '" + name.substr(0, 100) + "' (tools: " + names + ")");
}

StatusOr<json> Tools::execute_code(const json& args, const ToolContext& ctx) {
  ExecuteRequest req;
  req.code = args["code"];
  req.language = args["language"];
  if (args.contains("libraries")) req.libraries = args["libraries"].get<std::vector<std::string>>();
  if (args.contains("timeout")) req.limits.timeout_ms = seconds_to_ms(args["timeout"].get<double>());
  if (args.contains("stdin")) req.stdin_data = args["stdin"];
  auto r = service_.execute(req);
  if (!r.ok()) return failure(r.status(), ctx, "execute_code");
  ctx.log("info", "execute_code (" + req.language + "): " + exec_status_name(r->status()));
  return exec_tool_result(*r, ctx.structured);
}

StatusOr<json> Tools::create_session(const json& args, const ToolContext& ctx) {
  SessionRequest req;
  req.language = args["language"];
  req.interactive = args.value("interactive", false);
  auto id = service_.open_session(req);
  if (!id.ok()) return failure(id.status(), ctx, "create_session");
  const std::string language = lang::find_language(req.language)->name();
  ctx.log("info", "session " + *id + " (" + language + ") created");
  return with_structured(text_tool_result("Created session " + *id + " (" + language + "). Pass session_id \"" + *id +
                                          "\" to run_in_session, upload_file, "
                                          "read_file and destroy_session."),
                         {{"session_id", *id}, {"language", language}, {"interactive", req.interactive}}, ctx);
}

StatusOr<json> Tools::run_in_session(const json& args, const ToolContext& ctx) {
  RunOptions options;
  if (args.contains("timeout")) options.timeout_ms = seconds_to_ms(args["timeout"].get<double>());
  auto r = service_.run(args["session_id"], args["code"], options);
  if (!r.ok()) return failure(r.status(), ctx, "run_in_session");
  return exec_tool_result(*r, ctx.structured);
}

StatusOr<json> Tools::destroy_session(const json& args, const ToolContext& ctx) {
  const std::string id = args["session_id"];
  Status s = service_.close_session(id);
  if (!s.ok()) return failure(s, ctx, "destroy_session");
  ctx.log("info", "session " + id + " destroyed");
  return with_structured(text_tool_result("Destroyed session " + id + "."), {{"session_id", id}, {"destroyed", true}},
                         ctx);
}

StatusOr<json> Tools::upload_file(const json& args, const ToolContext& ctx) {
  FileEntry file;
  file.path = args["path"];
  if (args.value("encoding", "utf-8") == "base64") {
    auto bytes = base64_decode(args["content"]);
    if (!bytes.ok()) return InvalidArgument("content", "is not valid base64: " + bytes.status().message());
    file.data = std::move(bytes).value();
  } else {
    file.data = args["content"];
  }
  auto session = service_.session(args["session_id"]);
  if (!session.ok()) return failure(session.status(), ctx, "upload_file");
  Status s = (*session)->put_files({file});
  if (!s.ok()) return failure(s, ctx, "upload_file");
  return with_structured(text_tool_result("Wrote " + std::to_string(file.data.size()) + " bytes to " + file.path + "."),
                         {{"path", file.path}, {"size", file.data.size()}}, ctx);
}

StatusOr<json> Tools::read_file(const json& args, const ToolContext& ctx) {
  const std::string path = args["path"];
  auto session = service_.session(args["session_id"]);
  if (!session.ok()) return failure(session.status(), ctx, "read_file");
  auto files = (*session)->get_files({path}, max_read_bytes_);
  if (!files.ok()) return failure(files.status(), ctx, "read_file");
  if (files->empty()) return text_tool_result("read_file failed: " + path + ": not found", true);
  const std::string& bytes = files->front().data;
  const std::string mime = lang::mime_for(path);
  const bool text = is_utf8(bytes) && mime.rfind("image/", 0) != 0;
  json result;
  if (text) {
    result = text_tool_result(bytes);
  } else {
    result = {{"content", json::array({file_content(path, mime, bytes)})}, {"isError", false}};
  }
  return with_structured(std::move(result),
                         {{"path", path},
                          {"size", bytes.size()},
                          {"mime", mime},
                          {"encoding", text ? "utf-8" : "base64"},
                          {"content", text ? bytes : base64_encode(bytes)}},
                         ctx);
}

StatusOr<json> Tools::list_languages(const json&, const ToolContext& ctx) {
  const json languages = service_.languages();
  std::string text;
  for (const auto& l : languages) {
    text += l.value("name", "") + ": " +
            (l.value("available", false) ? l.value("version", "") : std::string("not available on this host")) + "\n";
  }
  return with_structured(text_tool_result(text), {{"languages", languages}}, ctx);
}

StatusOr<json> Tools::get_language_details(const json& args, const ToolContext& ctx) {
  const lang::LanguageHandler* h = lang::find_language(args["language"]);
  if (!h) {
    return InvalidArgument("language", "unknown language '" + args["language"].get<std::string>().substr(0, 100) +
                                           "'; one of: " + lang::language_names());
  }
  json details = {{"name", h->name()}};
  for (const auto& l : service_.languages()) {
    if (l.value("name", "") == h->name()) details = l;
  }
  auto install = h->install_argv({});
  details["libraries"] = install.ok() || install.status().code() != ErrorCode::kUnsupported;
  details["binary"] = h->binary();
  details["seccomp_profile"] = h->seccomp_profile();
  return with_structured(text_tool_result(details.dump(2)), details, ctx);
}

}  // namespace corral::mcp
