// Api: the HTTP API of `corral serve` as one function from request to response, with no
// sockets involved (server.h carries it over a unix socket and TCP; tests and the fuzz target
// call handle() directly). It authenticates, rate-limits, routes, parses bodies strictly and
// turns Service calls into JSON (or Server-Sent Events), counting everything for /metrics.
//
//   POST   /v1/execute                       one-shot run
//   POST   /v1/sessions   GET /v1/sessions   open / list
//   GET    /v1/sessions/{id}                 info      DELETE /v1/sessions/{id}  close
//   POST   /v1/sessions/{id}/run | /command | /install
//   PUT    /v1/sessions/{id}/files/{path}    raw body in (?mode=0755)
//   GET    /v1/sessions/{id}/files/{path}    raw bytes out
//   GET    /v1/languages  /v1/pool  /healthz  /metrics
//   /mcp                                     mounted by the caller (mcp_transport.h)
//
// Thread-safe: handle() runs on every connection's thread at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "src/http/auth.h"
#include "src/http/message.h"
#include "src/http/metrics.h"
#include "src/session/service.h"

namespace corral::http {

struct ApiOptions {
  // Required of TCP callers when set (Authorization: Bearer). The unix socket needs none.
  std::optional<std::string> token;
  uint64_t max_body_bytes = 16ull << 20;
  double rate_per_second = 0;  // per token (or peer); 0: unlimited
  uint64_t max_file_bytes = 64ull << 20;  // GET .../files/{path} refuses larger files
  // GET /v1/pool and the pool gauges: PoolSet::stats_json(). Null: no pool configured.
  std::function<nlohmann::json()> pool_stats;
};

class Api {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  Api(Service& service, ApiOptions options);

  // Never throws; every failure is a JSON error response.
  HttpResponse handle(const HttpRequest& request);
  // Serves `path` (exactly, e.g. "/mcp") with `handler`, behind the same auth and limits.
  void mount(const std::string& path, Handler handler);
  // From now on: 503 for new work (healthz says "shutting_down"); calls in flight finish.
  void begin_shutdown() { draining_ = true; }
  const ApiOptions& options() const { return options_; }

 private:
  HttpResponse dispatch(const HttpRequest& req, const std::string& path, const std::string& query,
                        std::string* route);
  HttpResponse execute(const HttpRequest& req);
  HttpResponse sessions_root(const HttpRequest& req);
  HttpResponse session_info(const std::string& id);
  HttpResponse session_call(const HttpRequest& req, const std::string& id, const std::string& verb);
  HttpResponse file_put(const HttpRequest& req, const std::string& id, const std::string& path,
                        const std::string& query);
  HttpResponse file_get(const std::string& id, const std::string& path);
  HttpResponse metrics_text();
  // A run as JSON, or streamed as events when asked; `call` gets the streaming callbacks.
  using RunCall = std::function<StatusOr<ExecResult>(std::function<void(std::string_view)> out,
                                                     std::function<void(std::string_view)> err)>;
  HttpResponse run_response(bool stream, RunCall call);

  Service& service_;
  ApiOptions options_;
  RateLimiter limiter_;
  Metrics metrics_;
  std::map<std::string, Handler> mounts_;
  std::atomic<bool> draining_{false};
};

// "%2F" -> "/"; nullopt on a malformed escape or an encoded NUL.
std::optional<std::string> percent_decode(const std::string& s);

}  // namespace corral::http
