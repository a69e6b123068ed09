#include "src/http/api.h"

#include <chrono>
#include <cmath>

#include "src/http/json_request.h"
#include "src/lang/language.h"
#include "src/http/sse.h"

namespace corral::http {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  if (!out.empty() && out.back().empty()) out.pop_back();  // a trailing slash
  return out;
}

HttpResponse method_not_allowed(const std::string& allow) {
  HttpResponse r = error_response(405, "method_not_allowed", "use " + allow, "method");
  r.headers["Allow"] = allow;
  return r;
}

HttpResponse not_found_route(const std::string& path) {
  return error_response(404, "not_found", "no such endpoint '" + path.substr(0, 200) + "'", "path");
}

}  // namespace

std::optional<std::string> percent_decode(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') return std::nullopt;
    out += c;
    i += 2;
  }
  return out;
}

Api::Api(Service& service, ApiOptions options)
    : service_(service), options_(std::move(options)), limiter_(options_.rate_per_second) {}

void Api::mount(const std::string& path, Handler handler) { mounts_[path] = std::move(handler); }

HttpResponse Api::handle(const HttpRequest& req) {
  const auto started = std::chrono::steady_clock::now();
  std::string route = "other";
  HttpResponse res;
  try {
    const size_t q = req.target.find('?');
    const std::string path = req.target.substr(0, q);
    const std::string query = q == std::string::npos ? std::string() : req.target.substr(q + 1);
    const bool health = path == "/healthz";
    std::string who = req.peer.empty() ? "unknown" : req.peer;
    if (path.empty() || path[0] != '/') {
      res = error_response(400, "invalid_argument", "the request target must be an absolute path", "path");
    } else if (req.body.size() > options_.max_body_bytes) {
      res = error_response(413, "payload_too_large",
                           "the body is larger than " + std::to_string(options_.max_body_bytes) + " bytes", "body");
    } else if (options_.token && req.over_tcp && !health &&
               !(bearer_token(req.header("authorization")) &&
                 tokens_equal(*bearer_token(req.header("authorization")), *options_.token))) {
      res = error_response(401, "unauthorized", "a valid bearer token is required (Authorization: Bearer ...)",
                           "authorization");
      res.headers["WWW-Authenticate"] = "Bearer";
    } else {
      if (auto t = bearer_token(req.header("authorization")); t && options_.token) who = "token:" + *t;
      double retry = 0;
      if (!health && !limiter_.allow(who, &retry)) {
        res = error_response(429, "rate_limited", "too many requests; retry later", "rate");
        res.headers["Retry-After"] = std::to_string(std::max<long>(1, static_cast<long>(std::ceil(retry))));
      } else if (draining_ && !health) {
        res = error_response(503, "shutting_down", "the server is shutting down", "service");
        res.headers["Retry-After"] = "1";
      } else {
        res = dispatch(req, path, query, &route);
      }
    }
  } catch (const std::exception& e) {
    res = error_response(500, "internal", std::string("unexpected error: ") + e.what(), "");
  } catch (...) {
    res = error_response(500, "internal", "unexpected error", "");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_.observe(route, res.status, secs);
  return res;
}

HttpResponse Api::dispatch(const HttpRequest& req, const std::string& path, const std::string& query,
                           std::string* route) {
  const std::string& m = req.method;
  if (auto it = mounts_.find(path); it != mounts_.end()) {
    *route = path;
    return it->second(req);
  }
  if (path == "/healthz") {
    *route = path;
    if (m != "GET" && m != "HEAD") return method_not_allowed("GET");
    if (draining_) return json_response(503, {{"status", "shutting_down"}});
    return json_response(200, {{"status", "ok"}});
  }
  if (path == "/metrics") {
    *route = path;
    if (m != "GET") return method_not_allowed("GET");
    return metrics_text();
  }
  if (path == "/v1/languages") {
    *route = path;
    if (m != "GET") return method_not_allowed("GET");
    return json_response(200, {{"languages", service_.languages()}});
  }
  if (path == "/v1/pool") {
    *route = path;
    if (m != "GET") return method_not_allowed("GET");
    if (!options_.pool_stats) return json_response(200, {{"enabled", false}, {"pools", nlohmann::json::array()}});
    nlohmann::json stats = options_.pool_stats();
    if (!stats.is_object()) stats = {{"pools", stats}};
    stats["enabled"] = true;
    return json_response(200, stats);
  }
  if (path == "/v1/execute") {
    *route = path;
    if (m != "POST") return method_not_allowed("POST");
    return execute(req);
  }
  const std::vector<std::string> parts = split_path(path);
  if (parts.size() >= 2 && parts[0] == "v1" && parts[1] == "sessions") {
    if (parts.size() == 2) {
      *route = "/v1/sessions";
      return sessions_root(req);
    }
    auto id = percent_decode(parts[2]);
    if (!id || id->empty()) return error_response(400, "invalid_argument", "malformed session id", "session_id");
    if (parts.size() == 3) {
      *route = "/v1/sessions/{id}";
      if (m == "GET") return session_info(*id);
      if (m == "DELETE") {
        Status s = service_.close_session(*id);
        if (!s.ok()) return status_response(s);
        return json_response(200, {{"id", *id}, {"closed", true}});
      }
      return method_not_allowed("GET, DELETE");
    }
    if (parts.size() == 4 && (parts[3] == "run" || parts[3] == "command" || parts[3] == "install")) {
      *route = "/v1/sessions/{id}/" + parts[3];
      if (m != "POST") return method_not_allowed("POST");
      return session_call(req, *id, parts[3]);
    }
    if (parts.size() >= 5 && parts[3] == "files") {
      *route = "/v1/sessions/{id}/files/{path}";
      // The file path is the rest of the URL path, slashes and all, decoded once.
      size_t at = 0;
      for (int i = 0; i < 4; ++i) at = path.find('/', at + 1);
      auto file = percent_decode(path.substr(at + 1));
      if (!file) return error_response(400, "invalid_argument", "malformed percent-escape in the file path", "path");
      Status ok = check_file_path(*file, "path");
      if (!ok.ok()) return status_response(ok);
      if (m == "PUT") return file_put(req, *id, *file, query);
      if (m == "GET") return file_get(*id, *file);
      return method_not_allowed("GET, PUT");
    }
  }
  return not_found_route(path);
}

HttpResponse Api::metrics_text() {
  nlohmann::json pools = options_.pool_stats ? options_.pool_stats() : nlohmann::json();
  HttpResponse r;
  r.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metrics_.render(service_.executions_by_status(), service_.running(), service_.sessions().size(), pools);
  return r;
}

HttpResponse Api::run_response(bool stream, RunCall call) {
  if (!stream) {
    auto r = call(nullptr, nullptr);
    if (!r.ok()) return status_response(r.status());
    return json_response(200, r->to_json());
  }
  // Refuse before the stream starts when admission would: the status code still means it.
  if (service_.running() >= service_.options().max_concurrent) {
    return status_response(Status(ErrorCode::kResourceExhausted,
                                  std::to_string(service_.options().max_concurrent) +
                                      " executions are already running; retry shortly",
                                  "max_concurrent"));
  }
  HttpResponse res;
  res.headers["Content-Type"] = "text/event-stream";
  res.headers["Cache-Control"] = "no-cache";
  res.stream = [call](const StreamWriter& write) {
    bool open = true;
    auto emit = [&](std::string_view event, const nlohmann::json& data) {
      if (open) open = write(sse_event(event, data));
    };
    auto r = call([&](std::string_view s) { emit("stdout", {{"data", std::string(s)}}); },
                  [&](std::string_view s) { emit("stderr", {{"data", std::string(s)}}); });
    if (r.ok()) {
      emit("result", r->to_json());
    } else {
      const Status& s = r.status();
      nlohmann::json e = error_json(error_code_name(s.code()), s.message(), s.field());
      e["error"]["status"] = http_status_for(s);
      emit("error", e);
    }
  };
  return res;
}

HttpResponse Api::execute(const HttpRequest& req) {
  auto j = parse_json_object(req.body);
  if (!j.ok()) return status_response(j.status());
  auto body = parse_execute(*j);
  if (!body.ok()) return status_response(body.status());
  const bool stream = body->stream || accepts_event_stream(req.header("accept"));
  if (stream && !lang::find_language(body->request.language)) {
    return status_response(InvalidArgument("language", "unknown language '" + body->request.language.substr(0, 100) +
                                                           "'; one of: " + lang::language_names()));
  }
  auto shared = std::make_shared<ExecuteRequest>(std::move(body->request));
  Service* svc = &service_;
  return run_response(stream, [svc, shared](auto out, auto err) {
    ExecuteRequest r = *shared;
    r.on_stdout = out;
    r.on_stderr = err;
    return svc->execute(r);
  });
}

}  // namespace corral::http
