// Server: carries Api over a unix socket (0660, optional group) and optionally TCP, with
// Boost.Beast parsing HTTP/1.1. One thread per connection (capped); every read and write
// waits with poll() under a deadline, so a slow or silent client cannot hold a thread, and
// stop() wakes idle connections at once while letting requests in flight finish.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/core/status.h"
#include "src/http/api.h"

namespace corral::http {

struct ServerOptions {
  std::string socket_path;            // empty: no unix socket
  std::optional<gid_t> socket_group;  // the socket's group (mode 0660)
  std::string listen;                 // "HOST:PORT" for TCP; empty: none. Port 0 picks one.
  // TCP off loopback is refused unless a token is configured (Api checks it per request).
  bool have_token = false;
  size_t max_connections = 256;
  uint64_t idle_timeout_ms = 60'000;  // a keep-alive connection with no request
  uint64_t io_timeout_ms = 30'000;    // a request that is being read, a response being written
};

class Server {
 public:
  // Binds every listener (errors name the address) and starts accepting.
  static StatusOr<std::unique_ptr<Server>> start(Api& api, ServerOptions options);
  ~Server();  // stop()

  // Stops accepting, closes idle connections, waits for requests in flight; idempotent.
  // The unix socket file is removed.
  void stop();
  // "127.0.0.1:41234" once bound (the real port when 0 was asked for); empty without TCP.
  std::string tcp_address() const { return tcp_address_; }
  size_t connections() const;

 private:
  Server(Api& api, ServerOptions options);
  void accept_loop(int listen_fd, bool tcp);
  void serve_connection(int fd, bool tcp, std::string peer);

  Api& api_;
  ServerOptions options_;
  int stop_fd_ = -1;  // eventfd: readable once stop() begins, wakes every poll
  std::vector<int> listen_fds_;
  std::vector<std::thread> acceptors_;
  std::string tcp_address_;
  mutable std::mutex mu_;
  std::condition_variable drained_;
  size_t active_ = 0;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
};

}  // namespace corral::http
