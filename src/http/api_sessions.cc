// The session endpoints of Api: open, list, info, run/command/install, files in and out.
#include <charconv>

#include "src/http/api.h"
#include "src/http/json_request.h"
#include "src/http/sse.h"
#include "src/lang/artifacts.h"

namespace corral::http {
namespace {

nlohmann::json info_json(const SessionInfo& s) {
  return {{"id", s.id}, {"language", s.language}, {"interactive", s.interactive}, {"age_ms", s.age_ms},
          {"runs", s.runs}};
}

// "mode=0755&x=y" -> the value of `key`, if present.
std::optional<std::string> query_value(const std::string& query, const std::string& key) {
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string kv = query.substr(start, end - start);
    const size_t eq = kv.find('=');
    if (kv.substr(0, eq) == key) return eq == std::string::npos ? std::string() : kv.substr(eq + 1);
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

HttpResponse Api::sessions_root(const HttpRequest& req) {
  if (req.method == "GET") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : service_.sessions()) list.push_back(info_json(s));
    return json_response(200, {{"sessions", list}});
  }
  if (req.method != "POST") {
    HttpResponse r = error_response(405, "method_not_allowed", "use GET, POST", "method");
    r.headers["Allow"] = "GET, POST";
    return r;
  }
  auto j = parse_json_object(req.body);
  if (!j.ok()) return status_response(j.status());
  auto sr = parse_session(*j);
  if (!sr.ok()) return status_response(sr.status());
  auto id = service_.open_session(*sr);
  if (!id.ok()) return status_response(id.status());
  HttpResponse r = json_response(201, {{"id", *id}, {"language", sr->language}, {"interactive", sr->interactive}});
  r.headers["Location"] = "/v1/sessions/" + *id;
  return r;
}

HttpResponse Api::session_info(const std::string& id) {
  for (const auto& s : service_.sessions()) {
    if (s.id == id) return json_response(200, info_json(s));
  }
  auto s = service_.session(id);  // the NotFound naming why (expired or unknown)
  if (!s.ok()) return status_response(s.status());
  return status_response(Status(ErrorCode::kNotFound, "no session '" + id.substr(0, 64) + "'", "session_id"));
}

HttpResponse Api::session_call(const HttpRequest& req, const std::string& id, const std::string& verb) {
  auto j = parse_json_object(req.body);
  if (!j.ok()) return status_response(j.status());
  Service* svc = &service_;
  if (verb == "install") {
    auto libs = parse_install(*j);
    if (!libs.ok()) return status_response(libs.status());
    auto r = service_.install(id, *libs);
    if (!r.ok()) return status_response(r.status());
    return json_response(200, r->to_json());
  }
  auto body = parse_run(*j, verb == "command");
  if (!body.ok()) return status_response(body.status());
  const bool stream = body->stream || accepts_event_stream(req.header("accept"));
  if (stream) {
    auto s = service_.session(id);  // 404 before the stream starts, not inside it
    if (!s.ok()) return status_response(s.status());
  }
  auto shared = std::make_shared<RunBody>(std::move(body).value());
  const bool command = verb == "command";
  return run_response(stream, [svc, shared, id, command](auto out, auto err) {
    RunOptions o = shared->options;
    o.on_stdout = out;
    o.on_stderr = err;
    return command ? svc->command(id, shared->text, o) : svc->run(id, shared->text, o);
  });
}

HttpResponse Api::file_put(const HttpRequest& req, const std::string& id, const std::string& path,
                           const std::string& query) {
  uint32_t mode = 0644;
  if (auto m = query_value(query, "mode")) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(m->data(), m->data() + m->size(), v, 8);
    if (ec != std::errc() || end != m->data() + m->size() || m->empty() || v > 07777) {
      return error_response(400, "invalid_argument", "must be an octal file mode such as 0644", "mode");
    }
    mode = v;
  }
  auto s = service_.session(id);
  if (!s.ok()) return status_response(s.status());
  Status put = (*s)->put_files({FileEntry{path, req.body, mode}});
  if (!put.ok()) return status_response(put);
  return json_response(201, {{"path", path}, {"size", req.body.size()}});
}

HttpResponse Api::file_get(const std::string& id, const std::string& path) {
  auto s = service_.session(id);
  if (!s.ok()) return status_response(s.status());
  auto files = (*s)->get_files({path}, options_.max_file_bytes);
  if (!files.ok()) {
    Status st = files.status();
    // Whatever the executor calls the path, the caller's name for it is "path".
    return status_response(Status(st.code(), st.message(), "path", st.sys_errno()));
  }
  if (files->empty()) return error_response(404, "not_found", "no such file", "path");
  HttpResponse r;
  r.headers["Content-Type"] = lang::mime_for(path);
  r.body = std::move(files->front().data);
  return r;
}

}  // namespace corral::http
