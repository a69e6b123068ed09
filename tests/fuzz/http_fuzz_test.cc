// Fuzzing the HTTP request handling with a generated corpus: valid requests for every
// endpoint, mutated (bytes flipped and cut, JSON values swapped for other types, keys added
// and dropped, paths given traversal and escapes, methods and headers changed) and driven
// through Api::handle on the in-memory executor. Every response must be well formed: a
// status from 200 to 599, JSON (or a known non-JSON type), an error body with string code,
// message and field for every 4xx/5xx, SSE events whose data is JSON, and no sandbox left.
// Deterministic (fixed seeds), so a failure names the case that reproduces it.
#include <gtest/gtest.h>

#include <random>

#include "src/http/api.h"
#include "src/http/mcp_transport.h"
#include "src/mcp/mcp_server.h"
#include "tests/fuzz/fake_executor.h"

namespace corral::testing {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using nlohmann::json;

struct Seed {
  std::string method, target, body;
};

std::vector<Seed> seeds(const std::string& sid) {
  const std::string s = "/v1/sessions/" + sid;
  return {
      {"POST", "/v1/execute", R"J({"language":"python","code":"print(1)"})J"},
      {"POST", "/v1/execute",
       R"J({"language":"bash","code":"echo hi","stdin":"in","timeout_ms":1000,"memory_bytes":67108864,"files":[{"path":"a.txt","content":"x"},{"path":"b.bin","content":"AAE=","encoding":"base64","mode":420}],"stream":true})J"},
      {"POST", "/v1/execute", R"J({"language":"python","code":"x","security_preset":"strict","libraries":[]})J"},
      {"POST", "/v1/sessions", R"J({"language":"python","interactive":false,"idle_ttl_ms":60000,"timeout_ms":5000})J"},
      {"POST", s + "/run", R"J({"code":"print(2)","stdin":"","timeout_ms":1000})J"},
      {"POST", s + "/run", R"J({"code":"print(3)","stream":true})J"},
      {"POST", s + "/command", R"J({"command":"ls -la","timeout_ms":1000})J"},
      {"POST", s + "/install", R"J({"libraries":["requests"]})J"},
      {"PUT", s + "/files/dir/file.txt?mode=0644", "file body"},
      {"GET", s + "/files/dir/file.txt", ""},
      {"GET", s, ""},
      {"GET", "/v1/sessions", ""},
      {"GET", "/v1/languages", ""},
      {"GET", "/v1/pool", ""},
      {"GET", "/healthz", ""},
      {"GET", "/metrics", ""},
      {"POST", "/mcp", R"J({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})J"},
      {"POST", "/mcp", R"J({"jsonrpc":"2.0","id":2,"method":"tools/list"})J"},
      {"POST", "/mcp", R"J({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"language":"python","code":"print(1)"}}})J"},
      {"DELETE", s, ""},
  };
}

class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}
  size_t pick(size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng_) : 0; }
  bool coin(int one_in) { return pick(static_cast<size_t>(one_in)) == 0; }

  json random_value(int depth = 0) {
    switch (pick(depth > 2 ? 7 : 9)) {
      case 0: return nullptr;
      case 1: return coin(2);
      case 2: return static_cast<int64_t>(pick(5) == 0 ? -1 : pick(1u << 31)) * (coin(3) ? -1 : 1);
      case 3: return std::numeric_limits<uint64_t>::max() - pick(3);
      case 4: return 1.5e308 * (coin(2) ? 1 : -1);
      case 5: return random_string();
      case 6: return "";
      case 7: {
        json a = json::array();
        for (size_t i = pick(4); i > 0; --i) a.push_back(random_value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (size_t i = pick(4); i > 0; --i) o[random_string()] = random_value(depth + 1);
        return o;
      }
    }
  }

  std::string random_string() {
    static const std::vector<std::string> words = {
        "python", "bash", "cobol", "../../etc/passwd", "/etc/shadow", "..", "%2e%2e", "a\0b", "\xff\xfe", "é",
        "FAKE_TIMEOUT", "FAKE_FAIL", "strict", "0644", "99999999999999999999", "{\"x\":1}", "\n\r", "language",
        "code", "files", std::string(5000, 'A'), "base64", "utf-8", "-1", "null", "numpy"};
    return words[pick(words.size())];
  }

  // Replace, drop or add a key somewhere in the object tree.
  void mutate_json(json& j, int depth = 0) {
    if (j.is_object() && !j.empty() && coin(2)) {
      auto it = j.begin();
      std::advance(it, static_cast<long>(pick(j.size())));
      switch (pick(4)) {
        case 0: j.erase(it); return;
        case 1: *it = random_value(); return;
        case 2: j[random_string()] = random_value(); return;
        default: return mutate_json(*it, depth + 1);
      }
    }
    if (j.is_array() && !j.empty() && coin(2)) return mutate_json(j[pick(j.size())], depth + 1);
    if (j.is_object()) {
      j[random_string()] = random_value();
    } else {
      j = random_value();
    }
  }

  std::string mutate_bytes(std::string s) {
    for (size_t n = 1 + pick(4); n > 0; --n) {
      if (s.empty()) {
        s += static_cast<char>(pick(256));
        continue;
      }
      switch (pick(5)) {
        case 0: s[pick(s.size())] = static_cast<char>(pick(256)); break;
        case 1: s.resize(pick(s.size())); break;
        case 2: s.insert(pick(s.size()), 1, "{}[]\",:\\"[pick(8)]); break;
        case 3: s.insert(pick(s.size()), s.substr(pick(s.size()), 16)); break;
        default: s.erase(pick(s.size()), 1 + pick(8)); break;
      }
    }
    return s;
  }

  std::string mutate_target(std::string t) {
    static const std::vector<std::string> bits = {"../", "%2e%2e/", "%00", "%", "%zz", "//", "?", "?mode=9999",
                                                  "?mode=abc", "/x", "%2F", "\x01", " ", "#frag", "/files/",
                                                  "/../../etc/passwd"};
    switch (pick(4)) {
      case 0: t.insert(pick(t.size() + 1), bits[pick(bits.size())]); break;
      case 1: t += bits[pick(bits.size())]; break;
      case 2: t = mutate_bytes(t); break;
      default: t.resize(pick(t.size() + 1)); break;
    }
    return t;
  }

 private:
  std::mt19937 rng_;
};

// The invariants every response must keep.
void check_response(const HttpRequest& req, const HttpResponse& r, const std::string& what) {
  ASSERT_GE(r.status, 200) << what;
  ASSERT_LE(r.status, 599) << what;
  auto ct = r.headers.find("Content-Type");
  if (r.stream) {
    ASSERT_NE(ct, r.headers.end());
    ASSERT_EQ(ct->second, "text/event-stream") << what;
    std::string all;
    r.stream([&](std::string_view s) {
      all += s;
      return true;
    });
    // Every event: "event: NAME\ndata: JSON\n\n"; the last is result or error.
    size_t pos = 0, events = 0;
    std::string last;
    while (pos < all.size()) {
      size_t end = all.find("\n\n", pos);
      ASSERT_NE(end, std::string::npos) << what;
      const std::string ev = all.substr(pos, end - pos);
      ASSERT_EQ(ev.rfind("event: ", 0), 0u) << what << ev;
      const size_t nl = ev.find('\n');
      ASSERT_NE(nl, std::string::npos);
      last = ev.substr(7, nl - 7);
      ASSERT_EQ(ev.compare(nl + 1, 6, "data: "), 0) << what;
      ASSERT_FALSE(json::parse(ev.substr(nl + 7), nullptr, false).is_discarded()) << what << ev;
      ++events;
      pos = end + 2;
    }
    ASSERT_GE(events, 1u) << what;
    ASSERT_TRUE(last == "result" || last == "error") << what << last;
    return;
  }
  if (r.status == 202) return;  // MCP notification: no body
  if (r.status == 200 && req.method == "GET" && req.target.find("/files/") != std::string::npos) return;  // raw
  if (r.status == 200 && req.method == "DELETE" && r.body.empty()) return;  // MCP session ended
  if (ct != r.headers.end() && ct->second != "application/json") {
    // Raw file bytes, /metrics text, an MCP event stream: only on success.
    ASSERT_LT(r.status, 300) << what;
    return;
  }
  json j = json::parse(r.body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << what << " body: " << r.body.substr(0, 300);
  if (r.status >= 400) {
    if (j.contains("jsonrpc")) {  // /mcp answers in JSON-RPC
      ASSERT_TRUE(j["error"]["code"].is_number_integer()) << what;
      ASSERT_TRUE(j["error"]["message"].is_string()) << what;
      return;
    }
    ASSERT_TRUE(j.contains("error")) << what << r.body;
    ASSERT_TRUE(j["error"]["code"].is_string()) << what << r.body;
    ASSERT_TRUE(j["error"]["message"].is_string()) << what << r.body;
    ASSERT_FALSE(j["error"]["message"].get<std::string>().empty()) << what << r.body;
    ASSERT_TRUE(j["error"]["field"].is_string()) << what << r.body;
  }
}

TEST(HttpFuzz, MutatedRequestsAlwaysGetWellFormedAnswers) {
  FakeExecutor fake;
  ServiceOptions so;
  so.executor = &fake;
  so.max_sessions = 16;
  so.session_idle_ttl_ms = 0;
  auto service = Service::create(so);
  ASSERT_TRUE(service.ok());
  http::ApiOptions ao;
  ao.max_body_bytes = 64 * 1024;
  http::Api api(**service, ao);
  http::McpTransportOptions mo;
  Service* svc = service->get();
  mo.new_session = [svc]() -> http::McpHandler {
    auto server = std::make_shared<mcp::McpServer>(*svc);
    return [server](const json& m) { return server->handle(m); };
  };
  mo.max_sessions = 8;
  http::McpTransport mcp(mo);
  api.mount("/mcp", [&mcp](const HttpRequest& r) { return mcp.handle(r); });

  auto send = [&](HttpRequest req) {
    req.peer = "unix";
    return api.handle(req);
  };
  // A live session and an MCP session, so mutated requests reach the deep paths.
  HttpRequest open{"POST", "/v1/sessions", {}, R"J({"language":"python"})J"};
  auto opened = send(open);
  ASSERT_EQ(opened.status, 201);
  std::string sid = json::parse(opened.body)["id"];
  HttpRequest init{"POST", "/mcp", {{"accept", "application/json, text/event-stream"}},
                   seeds(sid)[16].body};
  auto inited = send(init);
  ASSERT_EQ(inited.status, 200) << inited.body;
  const std::string mcp_sid = inited.headers["Mcp-Session-Id"];

  const int kCases = 20000;
  Mutator m(20261122);
  const std::vector<std::string> methods = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "", "G\nET"};
  int statuses[6] = {};
  for (int i = 0; i < kCases; ++i) {
    auto all = seeds(sid);
    Seed s = all[m.pick(all.size())];
    HttpRequest req{s.method, s.target, {}, s.body};
    if (s.target == "/mcp") {
      req.headers["accept"] = "application/json, text/event-stream";
      req.headers["mcp-session-id"] = mcp_sid;
    }
    const int kind = static_cast<int>(m.pick(8));
    if (kind <= 2) {
      json j = json::parse(req.body, nullptr, false);
      if (!j.is_discarded()) {
        for (size_t n = 1 + m.pick(3); n > 0; --n) m.mutate_json(j);
        req.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
      }
    } else if (kind == 3) {
      req.body = m.mutate_bytes(req.body);
    } else if (kind == 4) {
      req.target = m.mutate_target(req.target);
    } else if (kind == 5) {
      req.method = methods[m.pick(methods.size())];
    } else if (kind == 6) {
      static const std::vector<std::pair<std::string, std::string>> headers = {
          {"accept", "text/event-stream"}, {"accept", "text/html"}, {"authorization", "Bearer x"},
          {"mcp-session-id", "ffff"}, {"mcp-protocol-version", "bogus"}, {"origin", "http://evil"},
          {"content-type", "text/plain"}};
      auto h = headers[m.pick(headers.size())];
      req.headers[h.first] = h.second;
    } else {
      req.body = m.mutate_bytes(req.body);
      req.target = m.mutate_target(req.target);
    }
    const std::string what = "case " + std::to_string(i) + ": " + req.method + " " + req.target.substr(0, 120) +
                             " body " + req.body.substr(0, 200);
    HttpResponse r = send(req);
    check_response(req, r, what);
    if (::testing::Test::HasFatalFailure()) return;
    ++statuses[std::min(5, r.status / 100)];
    // Keep a session alive for the next cases.
    if (!service->get()->session(sid).ok()) {
      auto again = send(open);
      if (again.status == 201) sid = json::parse(again.body)["id"];
    }
  }
  // The corpus must reach both sides: successes and client errors.
  EXPECT_GT(statuses[2], kCases / 20);
  EXPECT_GT(statuses[4], kCases / 4);
  printf("statuses: 2xx %d, 4xx %d, 5xx %d\n", statuses[2], statuses[4], statuses[5]);
  service->get()->shutdown();
  EXPECT_EQ(fake.live.load(), 0);
}

// Raw bytes as a request body for every JSON endpoint: the parser must never throw out.
TEST(HttpFuzz, RandomBodiesNeverCrash) {
  FakeExecutor fake;
  ServiceOptions so;
  so.executor = &fake;
  auto service = Service::create(so);
  ASSERT_TRUE(service.ok());
  http::Api api(**service, {});
  std::mt19937 rng(7);
  const std::vector<std::string> targets = {"/v1/execute", "/v1/sessions", "/v1/sessions/x/run",
                                            "/v1/sessions/x/command", "/v1/sessions/x/install"};
  for (int i = 0; i < 3000; ++i) {
    std::string body(rng() % 64, '\0');
    for (char& c : body) c = "{}[]\":,0123456789.eE+-truefalsnl \\u\x01\xff"[rng() % 38];
    HttpRequest req{"POST", targets[rng() % targets.size()], {}, body};
    req.peer = "unix";
    HttpResponse r = api.handle(req);
    check_response(req, r, "random body " + std::to_string(i) + ": " + body);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Deep nesting: no recursion blow-up.
  HttpRequest deep{"POST", "/v1/execute", {}, std::string(100000, '[') + std::string(100000, ']')};
  deep.peer = "unix";
  check_response(deep, api.handle(deep), "deep nesting");
  EXPECT_EQ(fake.live.load(), 0);
}

}  // namespace
}  // namespace corral::testing
