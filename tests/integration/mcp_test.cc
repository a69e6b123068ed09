// The MCP server on a real Service (native backend): JSON-RPC framing and errors, version
// negotiation and batches, tool schemas and strict argument checking, and every tool
// running real sandboxes — output, images, sessions, files, languages, logging, cancellation.
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "src/mcp/mcp_server.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;

class Mcp : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (IsSkipped()) return;
    ServiceOptions o;
    o.max_timeout_ms = 60'000;
    auto s = Service::create(o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    service_ = std::move(s).value();
    mcp::McpOptions mo;
    mo.notify = [this](const json& n) {
      std::lock_guard<std::mutex> lock(mu_);
      notifications_.push_back(n);
    };
    server_ = std::make_unique<mcp::McpServer>(*service_, mo);
  }
  void TearDown() override {
    server_.reset();
    service_.reset();
  }

  json request(const std::string& method, json params = json::object(), json id = 1) {
    auto r = server_->handle({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    EXPECT_TRUE(r.has_value()) << method;
    return r.value_or(json());
  }
  json initialize(const std::string& version = "2025-06-18") {
    json r = request("initialize", {{"protocolVersion", version},
                                    {"capabilities", json::object()},
                                    {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}});
    EXPECT_FALSE(server_->handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).has_value());
    return r;
  }
  // A tools/call that must succeed at the protocol level; returns its result.
  json call(const std::string& tool, json arguments) {
    json r = request("tools/call", {{"name", tool}, {"arguments", arguments}});
    EXPECT_TRUE(r.contains("result")) << r.dump();
    return r.value("result", json::object());
  }
  // A tools/call that must fail with -32602; returns the field the error names.
  std::string invalid_field(const std::string& tool, json arguments) {
    json r = request("tools/call", {{"name", tool}, {"arguments", arguments}});
    EXPECT_EQ(r["error"]["code"], -32602) << r.dump();
    return r["error"].value("data", json::object()).value("field", "");
  }
  static std::string text_of(const json& result) {
    for (const auto& c : result["content"]) {
      if (c["type"] == "text") return c["text"];
    }
    return {};
  }

  std::unique_ptr<Service> service_;
  std::unique_ptr<mcp::McpServer> server_;
  std::mutex mu_;
  std::vector<json> notifications_;
};

TEST_F(Mcp, InitializeNegotiatesTheProtocolVersion) {
  json r = initialize("2025-06-18");
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_TRUE(r["result"]["capabilities"].contains("logging"));
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "corral");
  EXPECT_FALSE(r["result"]["serverInfo"]["version"].get<std::string>().empty());
  EXPECT_EQ(initialize("2024-11-05")["result"]["protocolVersion"], "2024-11-05");
  EXPECT_EQ(server_->protocol_version(), "2024-11-05");
  EXPECT_EQ(initialize("2025-03-26")["result"]["protocolVersion"], "2025-03-26");
  // A version corral does not speak: it answers with its newest and the client decides.
  EXPECT_EQ(initialize("2099-01-01")["result"]["protocolVersion"], "2025-06-18");
  // initialize without clientInfo is invalid params naming it.
  json bad = request("initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}});
  EXPECT_EQ(bad["error"]["code"], -32602);
  EXPECT_EQ(bad["error"]["data"]["field"], "clientInfo");
}

TEST_F(Mcp, JsonRpcErrorsUseTheStandardCodes) {
  initialize();
  auto parse = server_->handle_text("{\"jsonrpc\": \"2.0\", \"id\": 1, ");
  ASSERT_TRUE(parse);
  EXPECT_EQ((*parse)["error"]["code"], -32700);
  EXPECT_TRUE((*parse)["id"].is_null());
  EXPECT_EQ((*server_->handle(json(42)))["error"]["code"], -32600);
  auto no_version = server_->handle({{"id", 7}, {"method", "ping"}});
  EXPECT_EQ((*no_version)["error"]["code"], -32600);
  EXPECT_EQ((*no_version)["id"], 7);
  auto null_id = server_->handle({{"jsonrpc", "2.0"}, {"id", nullptr}, {"method", "ping"}});
  EXPECT_EQ((*null_id)["error"]["code"], -32600);
  json unknown = request("resources/list", json::object(), "abc");
  EXPECT_EQ(unknown["error"]["code"], -32601);
  EXPECT_EQ(unknown["id"], "abc");  // string ids come back as they were
  auto array_params = server_->handle({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}, {"params", {1, 2}}});
  EXPECT_EQ((*array_params)["error"]["code"], -32602);
  json no_name = request("tools/call", {{"arguments", json::object()}});
  EXPECT_EQ(no_name["error"]["code"], -32602);
  EXPECT_EQ(no_name["error"]["data"]["field"], "name");
  json ping = request("ping");
  EXPECT_EQ(ping["result"], json::object());
  // Notifications and responses from the client get no answer.
  EXPECT_FALSE(server_->handle({{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}}));
  EXPECT_FALSE(server_->handle({{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}));
  json level = request("logging/setLevel", {{"level", "loud"}});
  EXPECT_EQ(level["error"]["code"], -32602);
  EXPECT_EQ(request("tools/list", {{"cursor", "x"}})["error"]["code"], -32602);
}

TEST_F(Mcp, BatchesOnlyWhereTheVersionHasThem) {
  initialize("2025-06-18");
  json batch = json::array({{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}});
  auto refused = server_->handle(batch);
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["error"]["code"], -32600);
  initialize("2025-03-26");
  batch = json::array({{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
                       {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                       {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}},
                       {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "initialize"}, {"params", json::object()}}});
  auto responses = server_->handle(batch);
  ASSERT_TRUE(responses && responses->is_array());
  ASSERT_EQ(responses->size(), 3u) << responses->dump();  // the notification has none
  EXPECT_EQ((*responses)[0]["id"], 1);
  EXPECT_EQ((*responses)[1]["result"]["tools"].size(), 8u);
  EXPECT_EQ((*responses)[2]["error"]["code"], -32600);  // initialize may not be batched
  EXPECT_EQ((*server_->handle(json::array()))["error"]["code"], -32600);
  EXPECT_FALSE(server_->handle(json::array({{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}})));
}

TEST_F(Mcp, ToolsListDeclaresStrictSchemas) {
  initialize("2025-06-18");
  json tools = request("tools/list")["result"]["tools"];
  std::set<std::string> names;
  for (const auto& t : tools) {
    names.insert(t["name"].get<std::string>());
    EXPECT_FALSE(t["description"].get<std::string>().empty());
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false) << t["name"];
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
  }
  EXPECT_EQ(names, (std::set<std::string>{"execute_code", "create_session", "run_in_session", "destroy_session",
                                          "upload_file", "read_file", "list_languages", "get_language_details"}));
  // Before 2025-06-18 there is no structured output to declare.
  initialize("2024-11-05");
  for (const auto& t : request("tools/list")["result"]["tools"]) EXPECT_FALSE(t.contains("outputSchema"));
  json r = call("execute_code", {{"code", "print(1)"}, {"language", "python"}});
  EXPECT_FALSE(r.contains("structuredContent"));
  EXPECT_NE(text_of(r).find("1\n"), std::string::npos);
}

TEST_F(Mcp, ArgumentsAreCheckedStrictlyAndTheFieldNamed) {
  initialize();
  EXPECT_EQ(invalid_field("execute_code", {{"language", "python"}}), "code");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"colour", "red"}}), "colour");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"timeout", "5"}}), "timeout");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"timeout", 0}}), "timeout");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"timeout", 100000}}), "timeout");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"libraries", {"ok", 3}}}),
            "libraries[1]");
  EXPECT_EQ(invalid_field("execute_code", {{"code", ""}, {"language", "python"}}), "code");
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "cobol"}}), "language");
  // No library directory on this service: naming a library is refused, with the reason.
  EXPECT_EQ(invalid_field("execute_code", {{"code", "1"}, {"language", "python"}, {"libraries", {"requests"}}}),
            "libraries");
  EXPECT_EQ(
      invalid_field("upload_file", {{"session_id", "x"}, {"path", "a"}, {"content", "%%"}, {"encoding", "base64"}}),
      "content");
  EXPECT_EQ(
      invalid_field("upload_file", {{"session_id", "x"}, {"path", "a"}, {"content", "a"}, {"encoding", "utf-16"}}),
      "encoding");
  EXPECT_EQ(invalid_field("no_such_tool", json::object()), "name");
  json r = request("tools/call", {{"name", "list_languages"}, {"arguments", {1, 2}}});
  EXPECT_EQ(r["error"]["data"]["field"], "arguments");
}

TEST_F(Mcp, ExecuteCodeReturnsTextAndStructuredResults) {
  initialize();
  json ok = call("execute_code", {{"code", "import sys\nprint('hello from mcp'); print('warn', file=sys.stderr)"},
                                  {"language", "python"}});
  EXPECT_EQ(ok["isError"], false);
  EXPECT_NE(text_of(ok).find("hello from mcp"), std::string::npos);
  EXPECT_NE(text_of(ok).find("status: ok"), std::string::npos);
  EXPECT_EQ(ok["structuredContent"]["status"], "ok");
  EXPECT_EQ(ok["structuredContent"]["exit_code"], 0);
  EXPECT_EQ(ok["structuredContent"]["stdout"], "hello from mcp\n");
  EXPECT_EQ(ok["structuredContent"]["stderr"], "warn\n");
  EXPECT_GT(ok["structuredContent"]["usage"]["wall_ms"].get<double>(), 0);
  json failed = call("execute_code", {{"code", "exit 3"}, {"language", "bash"}});
  EXPECT_EQ(failed["isError"], true);
  EXPECT_EQ(failed["structuredContent"]["status"], "nonzero_exit");
  EXPECT_EQ(failed["structuredContent"]["exit_code"], 3);
  // Output that is not UTF-8 still makes a message any JSON serialiser accepts.
  json bytes = call("execute_code", {{"code", "printf 'ok \\377\\376 end'"}, {"language", "bash"}});
  EXPECT_NO_THROW(bytes.dump());
  EXPECT_NE(text_of(bytes).find("ok \xEF\xBF\xBD"), std::string::npos)
      << bytes.dump(-1, ' ', false, json::error_handler_t::replace);
  json with_stdin = call("execute_code", {{"code", "print(input()[::-1])"}, {"language", "py"}, {"stdin", "abc\n"}});
  EXPECT_EQ(with_stdin["structuredContent"]["stdout"], "cba\n");
  json slow = call("execute_code", {{"code", "while True: pass"}, {"language", "python"}, {"timeout", 0.5}});
  EXPECT_EQ(slow["isError"], true);
  EXPECT_EQ(slow["structuredContent"]["status"], "timeout");
  json compiled =
      call("execute_code", {{"code", "#include <cstdio>\nint main() { puts(\"c++ ok\"); }"}, {"language", "cpp"}});
  EXPECT_EQ(compiled["structuredContent"]["stdout"], "c++ ok\n") << compiled.dump();
}

TEST_F(Mcp, PlotsComeBackAsImageContent) {
  initialize();
  json r = call("execute_code", {{"code",
                                  "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]); plt.show()\n"
                                  "import os; os.makedirs('/sandbox/out', exist_ok=True)\n"
                                  "open('/sandbox/out/data.csv', 'w').write('a,b\\n1,2\\n')"},
                                 {"language", "python"}});
  ASSERT_EQ(r["structuredContent"]["status"], "ok") << r.dump().substr(0, 2000);
  const json* image = nullptr;
  const json* resource = nullptr;
  for (const auto& c : r["content"]) {
    if (c["type"] == "image") image = &c;
    if (c["type"] == "resource") resource = &c;
  }
  ASSERT_TRUE(image) << r.dump().substr(0, 2000);
  EXPECT_EQ((*image)["mimeType"], "image/png");
  auto png = base64_decode((*image)["data"]);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  ASSERT_TRUE(resource);
  EXPECT_EQ((*resource)["resource"]["text"], "a,b\n1,2\n");
  EXPECT_EQ((*resource)["resource"]["uri"], "sandbox:///sandbox/out/data.csv");
  // The bytes travel once: structuredContent lists the artifacts without them.
  ASSERT_EQ(r["structuredContent"]["artifacts"].size(), 2u);
  for (const auto& a : r["structuredContent"]["artifacts"]) EXPECT_FALSE(a.contains("bytes"));
}

TEST_F(Mcp, SessionsKeepFilesAndMoveThemInAndOut) {
  initialize();
  json created = call("create_session", {{"language", "python"}});
  ASSERT_EQ(created["isError"], false) << created.dump();
  const std::string id = created["structuredContent"]["session_id"];
  EXPECT_EQ(id.size(), 32u);
  EXPECT_NE(text_of(created).find(id), std::string::npos);
  json first = call("run_in_session", {{"session_id", id}, {"code", "open('kept.txt', 'w').write('across runs')"}});
  EXPECT_EQ(first["structuredContent"]["status"], "ok");
  json second = call("run_in_session", {{"session_id", id}, {"code", "print(open('kept.txt').read())"}});
  EXPECT_EQ(second["structuredContent"]["stdout"], "across runs\n");
  json up = call("upload_file", {{"session_id", id}, {"path", "data/in.txt"}, {"content", "uploaded text"}});
  EXPECT_EQ(up["structuredContent"]["size"], 13);
  json used = call("run_in_session", {{"session_id", id}, {"code", "print(open('data/in.txt').read().upper())"}});
  EXPECT_EQ(used["structuredContent"]["stdout"], "UPLOADED TEXT\n");
  json text = call("read_file", {{"session_id", id}, {"path", "/sandbox/kept.txt"}});
  EXPECT_EQ(text_of(text), "across runs");
  EXPECT_EQ(text["structuredContent"]["encoding"], "utf-8");
  const std::string binary("\x00\xff\x10 binary", 10);
  call("upload_file",
       {{"session_id", id}, {"path", "b.bin"}, {"content", base64_encode(binary)}, {"encoding", "base64"}});
  json back = call("read_file", {{"session_id", id}, {"path", "b.bin"}});
  EXPECT_EQ(back["structuredContent"]["encoding"], "base64");
  EXPECT_EQ(*base64_decode(back["structuredContent"]["content"]), binary);
  json missing = call("read_file", {{"session_id", id}, {"path", "nope.txt"}});
  EXPECT_EQ(missing["isError"], true);
  // '..' never leaves the sandbox's paths.
  json escape = request("tools/call", {{"name", "upload_file"},
                                       {"arguments", {{"session_id", id}, {"path", "../../etc/x"}, {"content", "x"}}}});
  EXPECT_TRUE(escape.contains("error") || escape["result"]["isError"] == true) << escape.dump();
  json destroyed = call("destroy_session", {{"session_id", id}});
  EXPECT_EQ(destroyed["structuredContent"]["destroyed"], true);
  json gone = call("run_in_session", {{"session_id", id}, {"code", "print(1)"}});
  EXPECT_EQ(gone["isError"], true);
  EXPECT_NE(text_of(gone).find("no session"), std::string::npos);
  EXPECT_EQ(call("destroy_session", {{"session_id", id}})["isError"], true);
}

TEST_F(Mcp, ClosingTheServiceLeavesNoSandbox) {
  initialize();
  json a = call("create_session", {{"language", "python"}});
  json b = call("create_session", {{"language", "bash"}});
  ASSERT_EQ(a["isError"], false) << a.dump();
  ASSERT_EQ(b["isError"], false) << b.dump();
  EXPECT_EQ(service_->sessions().size(), 2u);
  EXPECT_FALSE(children_of(getpid()).empty());  // their corral-init processes
  server_.reset();
  service_.reset();
  EXPECT_TRUE(children_of(getpid()).empty());
}

TEST_F(Mcp, LanguagesAndTheirDetails) {
  initialize();
  json list = call("list_languages", json::object());
  bool python = false;
  for (const auto& l : list["structuredContent"]["languages"]) {
    if (l["name"] == "python") {
      python = true;
      EXPECT_EQ(l["available"], true);
      EXPECT_EQ(l["version"].get<std::string>().rfind("Python 3", 0), 0u) << l.dump();
    }
  }
  EXPECT_TRUE(python);
  EXPECT_NE(text_of(list).find("python: Python 3"), std::string::npos);
  json py = call("get_language_details", {{"language", "py"}});
  EXPECT_EQ(py["structuredContent"]["name"], "python");
  EXPECT_EQ(py["structuredContent"]["libraries"], true);
  EXPECT_EQ(py["structuredContent"]["compiled"], false);
  json bash = call("get_language_details", {{"language", "bash"}});
  EXPECT_EQ(bash["structuredContent"]["libraries"], false);
  EXPECT_EQ(call("get_language_details", {{"language", "cpp"}})["structuredContent"]["compiled"], true);
  EXPECT_EQ(invalid_field("get_language_details", {{"language", "klingon"}}), "language");
}

TEST_F(Mcp, LogRecordsFollowTheLevelTheClientSet) {
  initialize();
  call("execute_code", {{"code", "print(1)"}, {"language", "python"}});
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(notifications_.empty());  // info is below the default level
  }
  EXPECT_EQ(request("logging/setLevel", {{"level", "info"}})["result"], json::object());
  call("execute_code", {{"code", "print(1)"}, {"language", "python"}});
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(notifications_.size(), 1u);
  EXPECT_EQ(notifications_[0]["method"], "notifications/message");
  EXPECT_EQ(notifications_[0]["params"]["level"], "info");
  EXPECT_NE(notifications_[0]["params"]["data"].get<std::string>().find("execute_code"), std::string::npos);
}

TEST_F(Mcp, PingIsAnsweredDuringACallAndACancelledCallGetsNoResponse) {
  initialize();
  json call = {{"jsonrpc", "2.0"}, {"id", "slow-1"}, {"method", "tools/call"}};
  call["params"] = {{"name", "execute_code"},
                    {"arguments", {{"code", "import time; time.sleep(1.5)"}, {"language", "python"}}}};
  auto slow = std::async(std::launch::async, [&] { return server_->handle(call); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(request("ping", json::object(), 2)["result"], json::object());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  EXPECT_FALSE(server_->handle({{"jsonrpc", "2.0"},
                                {"method", "notifications/cancelled"},
                                {"params", {{"requestId", "slow-1"}, {"reason", "user pressed stop"}}}}));
  EXPECT_FALSE(slow.get().has_value());
}

}  // namespace
}  // namespace corral::testing
