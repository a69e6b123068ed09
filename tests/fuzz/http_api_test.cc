// Api::handle without sockets, on an in-memory executor: every endpoint, the error format,
// auth, rate limits, admission, path traversal, SSE, /metrics, and the MCP transport rules.
#include <gtest/gtest.h>

#include "src/http/api.h"
#include "src/http/mcp_transport.h"
#include "tests/fuzz/fake_executor.h"

namespace corral::testing {
namespace {

using http::HttpRequest;
using http::HttpResponse;

class HttpApi : public ::testing::Test {
 protected:
  void SetUp() override { make({}); }
  void make(http::ApiOptions ao, size_t max_concurrent = 4) {
    api_.reset();
    service_.reset();
    ServiceOptions so;
    so.executor = &fake_;
    so.max_concurrent = max_concurrent;
    so.max_sessions = 3;
    auto s = Service::create(so);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    service_ = std::move(s).value();
    api_ = std::make_unique<http::Api>(*service_, ao);
  }
  HttpResponse call(const std::string& method, const std::string& target, const std::string& body = {},
                    std::map<std::string, std::string> headers = {}, bool tcp = false) {
    HttpRequest r;
    r.method = method;
    r.target = target;
    r.body = body;
    r.headers = std::move(headers);
    r.over_tcp = tcp;
    r.peer = tcp ? "127.0.0.1" : "unix";
    return api_->handle(r);
  }
  static nlohmann::json json(const HttpResponse& r) { return nlohmann::json::parse(r.body); }
  static std::string field(const HttpResponse& r) { return json(r)["error"]["field"].get<std::string>(); }
  std::string open_session() {
    auto r = call("POST", "/v1/sessions", R"J({"language":"python"})J");
    EXPECT_EQ(r.status, 201) << r.body;
    return json(r)["id"].get<std::string>();
  }

  FakeExecutor fake_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<http::Api> api_;
};

TEST_F(HttpApi, ExecuteReturnsTheResult) {
  auto r = call("POST", "/v1/execute",
                R"J({"language":"python","code":"print(1)","files":[{"path":"a/b.txt","content":"aGk=","encoding":"base64"}],"stdin":"x"})J");
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = json(r);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["stdout"], "print(1)x");
  EXPECT_EQ(r.headers["Content-Type"], "application/json");
  EXPECT_EQ(fake_.live.load(), 0);
}

TEST_F(HttpApi, BadInputNamesTheField) {
  struct Case {
    std::string body, field;
    int status;
  } cases[] = {
      {"{", "body", 400},
      {"[1,2]", "body", 400},
      {"", "body", 400},
      {R"J({"language":"python"})J", "code", 400},
      {R"J({"language":"python","code":1})J", "code", 400},
      {R"J({"language":"python","code":"x","bogus":1})J", "bogus", 400},
      {R"J({"language":"cobol","code":"x"})J", "language", 400},
      {R"J({"language":"python","code":"x","timeout_ms":-1})J", "timeout_ms", 400},
      {R"J({"language":"python","code":"x","timeout_ms":"5"})J", "timeout_ms", 400},
      {R"J({"language":"python","code":"x","files":[{"path":"../../etc/passwd","content":""}]})J", "files[0].path", 400},
      {R"J({"language":"python","code":"x","files":[{"content":""}]})J", "files[0].path", 400},
      {R"J({"language":"python","code":"x","files":[{"path":"a","extra":1}]})J", "files[0].extra", 400},
      {R"J({"language":"python","code":"x","files":[{"path":"a","encoding":"rot13"}]})J", "files[0].encoding", 400},
      {R"J({"language":"python","code":"x","libraries":[1]})J", "libraries[0]", 400},
      {R"J({"language":"python","code":"x","libraries":["numpy"]})J", "libraries", 400},
      {R"J({"language":"python","code":"x","security_preset":"nope"})J", "security_preset", 400},
      {R"J({"language":"python","code":"x","memory_bytes":12})J", "memory_bytes", 400},
  };
  for (const auto& c : cases) {
    auto r = call("POST", "/v1/execute", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    EXPECT_EQ(field(r), c.field) << c.body << " -> " << r.body;
    EXPECT_FALSE(json(r)["error"]["message"].get<std::string>().empty());
  }
  EXPECT_EQ(fake_.live.load(), 0);
}

TEST_F(HttpApi, SessionLifecycleAndFiles) {
  const std::string id = open_session();
  EXPECT_EQ(id.size(), 32u);
  auto put = call("PUT", "/v1/sessions/" + id + "/files/data/in%20put.txt?mode=0600", "hello");
  ASSERT_EQ(put.status, 201) << put.body;
  auto get = call("GET", "/v1/sessions/" + id + "/files/data/in%20put.txt");
  ASSERT_EQ(get.status, 200) << get.body;
  EXPECT_EQ(get.body, "hello");
  EXPECT_EQ(get.headers["Content-Type"], "text/plain");
  auto run = call("POST", "/v1/sessions/" + id + "/run", R"J({"code":"print(2)"})J");
  ASSERT_EQ(run.status, 200) << run.body;
  EXPECT_EQ(json(run)["stdout"], "print(2)");
  auto cmd = call("POST", "/v1/sessions/" + id + "/command", R"J({"command":"ls"})J");
  ASSERT_EQ(cmd.status, 200);
  EXPECT_EQ(json(cmd)["stdout"], "ls");
  auto info = call("GET", "/v1/sessions/" + id);
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(json(info)["runs"], 2);
  EXPECT_EQ(json(call("GET", "/v1/sessions"))["sessions"].size(), 1u);
  auto missing = call("GET", "/v1/sessions/" + id + "/files/nope.txt");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(field(missing), "path");
  for (const char* evil : {"../etc/passwd", "a/../../x", "%2e%2e/etc/passwd", "a/%2E%2E/b", "x%00y", "%zz"}) {
    auto r = call("GET", "/v1/sessions/" + id + "/files/" + evil);
    EXPECT_EQ(r.status, 400) << evil << " -> " << r.body;
    EXPECT_EQ(field(r), "path") << evil;
  }
  auto del = call("DELETE", "/v1/sessions/" + id);
  EXPECT_EQ(del.status, 200);
  auto gone = call("POST", "/v1/sessions/" + id + "/run", R"J({"code":"x"})J");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(field(gone), "session_id");
  EXPECT_EQ(call("DELETE", "/v1/sessions/" + id).status, 404);
  EXPECT_EQ(fake_.live.load(), 0);
}

TEST_F(HttpApi, SessionCapIs429) {
  for (int i = 0; i < 3; ++i) open_session();
  auto r = call("POST", "/v1/sessions", R"J({"language":"python"})J");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(field(r), "max_sessions");
  EXPECT_EQ(r.headers["Retry-After"], "1");
}

TEST_F(HttpApi, RoutesAndMethods) {
  EXPECT_EQ(call("GET", "/healthz").status, 200);
  EXPECT_EQ(call("GET", "/nope").status, 404);
  auto r = call("GET", "/v1/execute");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["Allow"], "POST");
  auto langs = call("GET", "/v1/languages");
  ASSERT_EQ(langs.status, 200);
  EXPECT_GE(json(langs)["languages"].size(), 8u);
  auto pool = call("GET", "/v1/pool");
  ASSERT_EQ(pool.status, 200);
  EXPECT_EQ(json(pool)["enabled"], false);
}

TEST_F(HttpApi, TokenRequiredOverTcpOnly) {
  http::ApiOptions ao;
  ao.token = "s3cret-token-0123456789";
  make(ao);
  auto r = call("GET", "/v1/languages", "", {}, true);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(field(r), "authorization");
  EXPECT_EQ(r.headers["WWW-Authenticate"], "Bearer");
  EXPECT_EQ(call("GET", "/v1/languages", "", {{"authorization", "Bearer wrong"}}, true).status, 401);
  EXPECT_EQ(call("GET", "/v1/languages", "", {{"authorization", "Bearer s3cret-token-0123456789"}}, true).status, 200);
  EXPECT_EQ(call("GET", "/v1/languages").status, 200);  // unix socket
  EXPECT_EQ(call("GET", "/healthz", "", {}, true).status, 200);
}

TEST_F(HttpApi, RateLimitIs429WithRetryAfter) {
  http::ApiOptions ao;
  ao.rate_per_second = 2;
  make(ao);
  int limited = 0;
  for (int i = 0; i < 6; ++i) {
    auto r = call("GET", "/v1/pool");
    if (r.status == 429) {
      ++limited;
      EXPECT_EQ(field(r), "rate");
      EXPECT_FALSE(r.headers["Retry-After"].empty());
    }
  }
  EXPECT_GE(limited, 3);
}

TEST_F(HttpApi, BodyLimitIs413) {
  http::ApiOptions ao;
  ao.max_body_bytes = 100;
  make(ao);
  auto r = call("POST", "/v1/execute", std::string(200, ' '));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(field(r), "body");
}

TEST_F(HttpApi, StreamsServerSentEvents) {
  auto r = call("POST", "/v1/execute", R"J({"language":"python","code":"streamed","stream":true})J");
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(r.stream);
  EXPECT_EQ(r.headers["Content-Type"], "text/event-stream");
  std::string all;
  r.stream([&](std::string_view s) {
    all += s;
    return true;
  });
  EXPECT_NE(all.find("event: stdout\ndata: {\"data\":\"streamed\"}\n\n"), std::string::npos) << all;
  EXPECT_NE(all.find("event: result\ndata: {"), std::string::npos) << all;
  // Via the Accept header too, and a bad language is still a plain 400 before any stream.
  auto bad = call("POST", "/v1/execute", R"J({"language":"cobol","code":"x"})J", {{"accept", "text/event-stream"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_FALSE(bad.stream);
}

TEST_F(HttpApi, MetricsAreText) {
  call("POST", "/v1/execute", R"J({"language":"python","code":"x"})J");
  call("POST", "/v1/execute", R"J({"language":"python","code":"FAKE_TIMEOUT"})J");
  auto r = call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["Content-Type"].rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_NE(r.body.find("corral_executions_total{status=\"ok\"} 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("corral_executions_total{status=\"timeout\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("corral_http_request_duration_seconds_bucket{route=\"/v1/execute\",le=\"+Inf\"} 2\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("corral_sessions_active 0\n"), std::string::npos);
}

TEST_F(HttpApi, ShutdownRefusesNewWork) {
  api_->begin_shutdown();
  EXPECT_EQ(call("GET", "/healthz").status, 503);
  auto r = call("POST", "/v1/execute", R"J({"language":"python","code":"x"})J");
  EXPECT_EQ(r.status, 503);
}

// The MCP Streamable HTTP rules, with an echo handler standing in for McpServer.
TEST(McpTransport, SessionsAcceptAndMethods) {
  http::McpTransportOptions o;
  o.new_session = [] {
    return [](const nlohmann::json& m) -> std::optional<nlohmann::json> {
      if (!m.contains("id")) return std::nullopt;
      return nlohmann::json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", {{"method", m["method"]}}}};
    };
  };
  http::McpTransport t(o);
  auto post = [&](const std::string& body, std::map<std::string, std::string> h) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/mcp";
    r.body = body;
    r.headers = std::move(h);
    return t.handle(r);
  };
  const std::string both = "application/json, text/event-stream";
  const std::string init = R"J({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})J";
  EXPECT_EQ(post(init, {{"accept", "text/html"}}).status, 406);
  EXPECT_EQ(post(init, {{"accept", both}, {"origin", "https://evil.example"}}).status, 403);
  EXPECT_EQ(post("{nope", {{"accept", both}}).status, 400);
  auto r = post(init, {{"accept", both}, {"content-type", "application/json"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string sid = r.headers["Mcp-Session-Id"];
  ASSERT_EQ(sid.size(), 32u);
  // Without the session id: 400; with an unknown one: 404.
  const std::string list = R"J({"jsonrpc":"2.0","id":2,"method":"tools/list"})J";
  EXPECT_EQ(post(list, {{"accept", both}}).status, 400);
  EXPECT_EQ(post(list, {{"accept", both}, {"mcp-session-id", "0000"}}).status, 404);
  auto ok = post(list, {{"accept", both}, {"mcp-session-id", sid}, {"mcp-protocol-version", "2025-06-18"}});
  ASSERT_EQ(ok.status, 200);
  EXPECT_EQ(nlohmann::json::parse(ok.body)["id"], 2);
  EXPECT_EQ(post(list, {{"accept", both}, {"mcp-session-id", sid}, {"mcp-protocol-version", "1999-01-01"}}).status,
            400);
  // Only an event stream accepted: one SSE event carries the response.
  auto sse = post(list, {{"accept", "text/event-stream"}, {"mcp-session-id", sid}});
  ASSERT_EQ(sse.status, 200);
  EXPECT_EQ(sse.headers["Content-Type"], "text/event-stream");
  EXPECT_EQ(sse.body.rfind("event: message\ndata: {", 0), 0u);
  // A notification: 202, no body.
  auto note = post(R"J({"jsonrpc":"2.0","method":"notifications/initialized"})J", {{"accept", both}, {"mcp-session-id", sid}});
  EXPECT_EQ(note.status, 202);
  EXPECT_TRUE(note.body.empty());
  HttpRequest get;
  get.method = "GET";
  get.target = "/mcp";
  EXPECT_EQ(t.handle(get).status, 405);
  HttpRequest del;
  del.method = "DELETE";
  del.target = "/mcp";
  del.headers["mcp-session-id"] = sid;
  EXPECT_EQ(t.handle(del).status, 200);
  EXPECT_EQ(t.handle(del).status, 404);
  EXPECT_EQ(post(list, {{"accept", both}, {"mcp-session-id", sid}}).status, 404);
  EXPECT_EQ(t.session_count(), 0u);
}

}  // namespace
}  // namespace corral::testing
