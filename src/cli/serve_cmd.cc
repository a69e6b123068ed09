// corral serve: the HTTP API (src/http) on a unix socket and optionally TCP, with the MCP
// Streamable HTTP endpoint at /mcp. SIGTERM or SIGINT: stop accepting, let requests in
// flight finish, close every session (destroying its sandbox), remove the socket, exit 0.
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "src/cli/commands.h"
#include "src/cli/output.h"
#include "src/http/api.h"
#include "src/http/mcp_transport.h"
#include "src/http/server.h"
#include "src/mcp/mcp_server.h"
#include "runtime/native_executor.h"
#include "src/session/pool.h"
#include "src/session/service.h"

namespace po = boost::program_options;

namespace corral::cli {
namespace {

constexpr char kDefaultSocket[] = "/run/corral/corral.sock";

std::optional<uint64_t> parse_count(const std::string& s, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return std::nullopt;
  return v;
}

// "10", "10/s", "0.5/s" -> requests per second.
std::optional<double> parse_rate(std::string s) {
  if (s.size() > 2 && s.compare(s.size() - 2, 2, "/s") == 0) s.resize(s.size() - 2);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = strtod(s.c_str(), &end);
  if (errno || end != s.c_str() + s.size() || !(v > 0) || v > 1e6) return std::nullopt;
  return v;
}

// The token: the file's first line, trimmed; the file must not be readable by others.
StatusOr<std::string> read_token(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return SysError("stat token file", path);
  if (st.st_mode & S_IROTH) return InvalidArgument("--token-file", path + " is readable by everyone; chmod 600 it");
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return InvalidArgument("--token-file", "cannot read a token from " + path);
  while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  while (!line.empty() && isspace(static_cast<unsigned char>(line.front()))) line.erase(0, 1);
  if (line.size() < 16) return InvalidArgument("--token-file", "the token in " + path + " is shorter than 16 characters");
  return line;
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  po::options_description desc("usage: corral serve [options]");
  desc.add_options()("help", "show this help")(
      "socket", po::value<std::string>(), (std::string("unix socket path (default ") + kDefaultSocket + ")").c_str())(
      "socket-group", po::value<std::string>(), "group owning the socket (mode 0660)")(
      "listen", po::value<std::string>(), "also listen on TCP HOST:PORT (needs --token-file)")(
      "token-file", po::value<std::string>(), "bearer token TCP clients must send")(
      "backend", po::value<std::string>(), "native (default), docker or podman")(
      "image", po::value<std::string>(), "docker/podman: the image sandboxes start from (default $CORRAL_IMAGE)")(
      "max-sessions", po::value<std::string>(), "open sessions at once (default 64)")(
      "max-concurrent", po::value<std::string>(), "executions at once (default 4); beyond: 429")(
      "max-body", po::value<std::string>(), "largest request body, e.g. 16M (default)")(
      "rate", po::value<std::string>(), "requests per second per token or peer, e.g. 20/s (default unlimited)")(
      "library-dir", po::value<std::string>(), "directory of local packages requests may install by name")(
      "pool", po::value<std::string>(), "keep N sandboxes ready per language and policy (default 0: none)")(
      "zygote", po::value<std::vector<std::string>>(),
      "fork LANG's sandboxes from a template with its imports done (python: numpy, pandas, matplotlib); "
      "native backend only; repeatable");
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto stop = parse_options("serve", args, desc, pos, &vm)) return *stop;

  ServiceOptions so;
  http::ApiOptions ao;
  http::ServerOptions sv;
  sv.socket_path = vm.count("socket") ? vm["socket"].as<std::string>() : kDefaultSocket;
  if (sv.socket_path.empty()) return usage_error("--socket: must not be empty");
  if (vm.count("socket-group")) {
    const std::string g = vm["socket-group"].as<std::string>();
    struct group* gr = getgrnam(g.c_str());
    if (gr) {
      sv.socket_group = gr->gr_gid;
    } else if (auto gid = parse_count(g, 0, UINT32_MAX - 1)) {
      sv.socket_group = static_cast<gid_t>(*gid);
    } else {
      return usage_error("--socket-group: no group named '" + g + "'");
    }
  }
  if (vm.count("listen")) sv.listen = vm["listen"].as<std::string>();
  if (vm.count("token-file")) {
    auto t = read_token(vm["token-file"].as<std::string>());
    if (!t.ok()) return usage_error(t.status().to_string());
    ao.token = *t;
    sv.have_token = true;
  }
  if (vm.count("backend")) so.backend.name = vm["backend"].as<std::string>();
  if (vm.count("image")) so.backend.image = vm["image"].as<std::string>();
  if (vm.count("max-sessions")) {
    auto n = parse_count(vm["max-sessions"].as<std::string>(), 1, 100000);
    if (!n) return usage_error("--max-sessions: a whole number from 1 to 100000");
    so.max_sessions = *n;
  }
  if (vm.count("max-concurrent")) {
    auto n = parse_count(vm["max-concurrent"].as<std::string>(), 1, 10000);
    if (!n) return usage_error("--max-concurrent: a whole number from 1 to 10000");
    so.max_concurrent = *n;
  }
  if (vm.count("max-body")) {
    auto n = parse_size(vm["max-body"].as<std::string>());
    if (!n || *n < 1024 || *n > (1ull << 30)) return usage_error("--max-body: a size from 1K to 1G, e.g. 16M");
    ao.max_body_bytes = *n;
  }
  if (vm.count("rate")) {
    auto r = parse_rate(vm["rate"].as<std::string>());
    if (!r) return usage_error("--rate: requests per second, e.g. 20/s or 0.5/s");
    ao.rate_per_second = *r;
  }
  if (vm.count("library-dir")) so.library_dir = vm["library-dir"].as<std::string>();
  std::vector<std::string> zygotes;
  if (vm.count("zygote")) zygotes = vm["zygote"].as<std::vector<std::string>>();
  for (const std::string& z : zygotes) {
    if (z != "python") return usage_error("--zygote: only python has a zygote (got '" + z + "')");
  }
  if (!zygotes.empty() && so.backend.name != "native") {
    return usage_error("--zygote: needs the native backend (not " + so.backend.name + ")");
  }
  uint64_t pool_size = 0;
  if (vm.count("pool")) {
    auto n = parse_count(vm["pool"].as<std::string>(), 0, 64);
    if (!n) return usage_error("--pool: a whole number from 0 to 64");
    pool_size = *n;
  }
  if (sv.socket_path == kDefaultSocket) mkdir("/run/corral", 0755);

  // Signals are taken synchronously by this thread; every thread started below inherits the
  // mask, so none of them is interrupted by SIGTERM.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // With a pool, the executor and the PoolSet are the service's, declared first so they
  // outlive it: closing a session releases its sandbox back into the pool.
  std::unique_ptr<Executor> executor;
  std::unique_ptr<PoolSet> pools;
  if (pool_size > 0 || !zygotes.empty()) {
    auto ex = make_executor(so.backend);
    if (!ex.ok()) return usage_error("serve: " + ex.status().to_string());
    executor = std::move(ex).value();
    so.executor = executor.get();
  }
  // Before the pool warms: pooled sandboxes of a zygote language are forked from it too.
  for (const std::string& z : zygotes) {
    auto* native = dynamic_cast<runtime::NativeExecutor*>(executor.get());
    runtime::ZygoteOptions zo;
    zo.language = z;
    Status started = native ? native->start_zygote(zo) : Unsupported("not the native backend");
    if (!started.ok()) return usage_error("--zygote " + z + ": " + started.to_string());
    fprintf(stderr, "corral: %s zygote ready (%s)\n", z.c_str(), native->zygote_info()[z].dump().c_str());
  }
  if (pool_size > 0) {
    PoolSetOptions po;
    po.defaults.min_size = pool_size;
    po.defaults.max_size = std::max<size_t>(po.defaults.max_size, pool_size + so.max_concurrent);
    pools = std::make_unique<PoolSet>(*executor, po);
    so.source = pools.get();
    ao.pool_stats = [p = pools.get()] { return p->stats_json(); };
    // Python with the default limits is what most requests ask for: warm it now.
    if (auto warm = pools->pool_for("python", Policy{}); !warm.ok()) {
      return usage_error("--pool: " + warm.status().to_string());
    }
  }
  auto service = Service::create(so);
  if (!service.ok()) return usage_error("serve: " + service.status().to_string());
  http::Api api(**service, ao);
  http::McpTransportOptions mo;
  Service* svc = service->get();
  mo.new_session = [svc]() -> http::McpHandler {
    auto server = std::make_shared<mcp::McpServer>(*svc);
    return [server](const nlohmann::json& m) { return server->handle(m); };
  };
  mo.protocol_versions = mcp::McpServer::supported_protocol_versions();
  http::McpTransport mcp(mo);
  api.mount("/mcp", [&mcp](const http::HttpRequest& r) { return mcp.handle(r); });

  auto server = http::Server::start(api, sv);
  if (!server.ok()) return usage_error("serve: " + server.status().to_string());
  fprintf(stderr, "corral: serving on unix:%s", sv.socket_path.c_str());
  if (!sv.listen.empty()) {
    fprintf(stderr, " and http://%s", (*server)->tcp_address().c_str());
  }
  fprintf(stderr, " (backend %s, pid %d)\n", so.backend.name.c_str(), getpid());

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  fprintf(stderr, "corral: %s: finishing requests in flight, closing sessions\n", strsignal(sig));
  api.begin_shutdown();
  (*server)->stop();
  (*service)->shutdown();
  if (pools) pools->shutdown();
  server->reset();
  fprintf(stderr, "corral: stopped\n");
  return 0;
}

}  // namespace corral::cli
