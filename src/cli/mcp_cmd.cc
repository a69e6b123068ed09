// corral mcp: the MCP server over stdio — newline-delimited JSON-RPC on stdin and stdout
// (stdout carries protocol messages only; diagnostics go to stderr). Tool calls run on their
// own threads so pings, cancellations and other calls are answered while code runs. EOF on
// stdin (or SIGINT/SIGTERM) waits for calls in flight, closes every session and exits 0.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/cli/commands.h"
#include "src/cli/output.h"
#include "src/mcp/mcp_server.h"
#include "src/session/service.h"

namespace po = boost::program_options;

namespace corral::cli {
namespace {

constexpr size_t kMaxLineBytes = 64u << 20;  // one message; larger ones are refused
volatile sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

// Tool calls in flight: counted so that EOF can wait for them before the service goes away.
class Inflight {
 public:
  void start() {
    std::lock_guard<std::mutex> lock(mu_);
    ++n_;
  }
  void done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--n_ == 0) cv_.notify_all();
  }
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return n_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t n_ = 0;
};

// A tools/call request goes to its own thread; everything else is answered in order.
bool is_tool_call(const nlohmann::json& m) {
  return m.is_object() && m.contains("id") && m.value("method", nlohmann::json()) == "tools/call";
}

}  // namespace

int mcp_command(const std::vector<std::string>& args) {
  po::options_description desc("usage: corral mcp [options]  (MCP over stdio: JSON-RPC lines on stdin/stdout)");
  desc.add_options()("help", "show this help")("backend", po::value<std::string>()->default_value("native"),
                                               "where sandboxes run: native, docker or podman")(
      "image", po::value<std::string>(), "docker/podman: the image sandboxes start from (default $CORRAL_IMAGE)")(
      "library-dir", po::value<std::string>(), "local packages execute_code may install by name (no network)")(
      "max-sessions", po::value<size_t>()->default_value(16), "sessions open at once")(
      "max-concurrent", po::value<size_t>()->default_value(4), "executions running at once");
  po::variables_map vm;
  if (auto stop = parse_options("mcp", args, desc, {}, &vm)) return *stop;

  ServiceOptions so;
  so.backend.name = vm["backend"].as<std::string>();
  if (vm.count("image")) so.backend.image = vm["image"].as<std::string>();
  if (vm.count("library-dir")) so.library_dir = vm["library-dir"].as<std::string>();
  so.max_sessions = vm["max-sessions"].as<size_t>();
  so.max_concurrent = vm["max-concurrent"].as<size_t>();
  if (so.max_sessions == 0) return usage_error("mcp: --max-sessions: must be at least 1");
  auto service = Service::create(so);
  if (!service.ok()) return usage_error("mcp: " + service.status().to_string());

  // A client that goes away must not kill us mid-write (sessions still need closing), and a
  // stop signal interrupts the read (no SA_RESTART) so that shutdown runs.
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::mutex out_mu;
  auto send = [&out_mu](const nlohmann::json& message) {
    const std::string line = mcp::to_wire(message) + "\n";
    std::lock_guard<std::mutex> lock(out_mu);
    write_all(1, line);
  };
  mcp::McpOptions mo;
  mo.server_version = CORRAL_VERSION;
  mo.notify = send;
  mcp::McpServer server(**service, mo);
  Inflight inflight;
  fprintf(stderr, "corral mcp: serving MCP on stdio (backend %s)\n", so.backend.name.c_str());

  auto serve_line = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    nlohmann::json message;
    try {
      message = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      if (auto r = server.handle_text(line)) send(*r);  // the parse error response
      return;
    }
    if (!is_tool_call(message)) {
      if (auto r = server.handle(message)) send(*r);
      return;
    }
    inflight.start();
    std::thread([&, message = std::move(message)] {
      if (auto r = server.handle(message)) send(*r);
      inflight.done();
    }).detach();
  };

  std::string pending;
  bool oversized = false;
  char buf[65536];
  while (!g_stop) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      if (oversized) {
        oversized = false;  // the tail of a refused message
      } else {
        serve_line(pending.substr(start, nl - start));
      }
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > kMaxLineBytes) {
      send({{"jsonrpc", "2.0"},
            {"id", nullptr},
            {"error",
             {{"code", -32700},
              {"message", "Parse error: a message is larger than " + std::to_string(kMaxLineBytes) + " bytes"}}}});
      pending.clear();
      oversized = true;
    }
  }
  if (!pending.empty() && !oversized) serve_line(pending);  // a last line without its newline
  inflight.wait_idle();
  (*service)->shutdown();
  fprintf(stderr, "corral mcp: %s, every session closed\n", g_stop ? "stopped by a signal" : "end of input");
  return 0;
}

}  // namespace corral::cli
