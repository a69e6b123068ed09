#include "src/http/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/error.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <sstream>

namespace corral::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// A Beast SyncReadStream over a non-blocking fd: each read waits with poll() until the
// deadline, and (while `idle`) until the server's stop eventfd fires.
class FdStream {
 public:
  FdStream(int fd, int stop_fd) : fd_(fd), stop_fd_(stop_fd) {}
  Clock::time_point deadline;
  bool idle = false;

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, beast::error_code& ec) {
    ec = {};
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers);
         ++it) {
      boost::asio::mutable_buffer b = *it;
      if (b.size() == 0) continue;
      for (;;) {
        ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
        if (n > 0) return static_cast<size_t>(n);
        if (n == 0) {
          ec = boost::asio::error::eof;
          return 0;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          ec = beast::error_code(errno, boost::system::system_category());
          return 0;
        }
        pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
        int r = ::poll(p, idle ? 2 : 1, ms_left(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
          ec = beast::error::timeout;
          return 0;
        }
        if (idle && (p[1].revents & POLLIN)) {
          ec = boost::asio::error::operation_aborted;
          return 0;
        }
      }
    }
    return 0;
  }
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    beast::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Everything, or false: the client went away or made no progress for `io_ms`.
  bool write_all(std::string_view data, uint64_t io_ms) {
    size_t off = 0;
    auto deadline = Clock::now() + std::chrono::milliseconds(io_ms);
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += static_cast<size_t>(n);
        deadline = Clock::now() + std::chrono::milliseconds(io_ms);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p = {fd_, POLLOUT, 0};
        int r = ::poll(&p, 1, ms_left(deadline));
        if (r == 0) return false;
        continue;
      }
      return false;
    }
    return true;
  }

 private:
  int fd_, stop_fd_;
};

// After an error answer to a request we did not read to the end: closing with unread input
// makes the kernel send RST, which can destroy the answer before the client reads it. So
// half-close, and drain what is still coming for a moment first.
void drain_and_close_write(int fd) {
  ::shutdown(fd, SHUT_WR);
  char buf[16384];
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  size_t total = 0;
  while (total < (4u << 20)) {
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
}

std::string serialize(bhttp::response<bhttp::string_body>& res) {
  std::ostringstream os;
  os << res;
  return os.str();
}

bhttp::response<bhttp::string_body> to_beast(HttpResponse& r, bool keep_alive) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), 11};
  for (const auto& [k, v] : r.headers) res.set(k, v);
  res.set(bhttp::field::server, "corral");
  res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

Status parse_listen(const std::string& listen, sockaddr_storage* ss, socklen_t* len, bool* loopback) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return InvalidArgument("listen", "'" + listen + "' is not HOST:PORT");
  }
  std::string host = listen.substr(0, colon);
  const std::string port_s = listen.substr(colon + 1);
  unsigned long port = 0;
  for (char c : port_s) {
    if (c < '0' || c > '9' || port > 65535) return InvalidArgument("listen", "port '" + port_s + "' is not 0-65535");
    port = port * 10 + static_cast<unsigned long>(c - '0');
  }
  if (port > 65535) return InvalidArgument("listen", "port '" + port_s + "' is not 0-65535");
  if (host == "localhost") host = "127.0.0.1";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  memset(ss, 0, sizeof *ss);
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v4;
    *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v6;
    *loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
  } else {
    return InvalidArgument("listen", "'" + host + "' is not an IP address (or localhost)");
  }
  return Status::Ok();
}

std::string addr_string(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a->sin_port));
  }
  auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
  return "[" + std::string(buf) + "]:" + std::to_string(ntohs(a->sin6_port));
}

// A stale socket file from a server that died is replaced; a live one is an error.
Status bind_unix(const std::string& path, std::optional<gid_t> group, int* out) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) return InvalidArgument("socket", "path is too long for a unix socket");
  memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return InvalidArgument("socket", path + " exists and is not a socket");
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    if (probe >= 0) close(probe);
    if (live) return Status(ErrorCode::kResourceExhausted, "another server is listening there", "socket");
    unlink(path.c_str());
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return SysError("socket", path);
  // Created 0660 from the start (umask), never briefly open to everyone.
  mode_t old = umask(0117);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  umask(old);
  if (rc != 0) {
    Status s = SysError("bind unix socket", path);
    close(fd);
    return s;
  }
  if (group && chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    Status s = SysError("chown socket to its group", path);
    close(fd);
    unlink(path.c_str());
    return s;
  }
  if (chmod(path.c_str(), 0660) != 0 || listen(fd, 128) != 0) {
    Status s = SysError("listen", path);
    close(fd);
    unlink(path.c_str());
    return s;
  }
  *out = fd;
  return Status::Ok();
}

}  // namespace

Server::Server(Api& api, ServerOptions options) : api_(api), options_(std::move(options)) {}

StatusOr<std::unique_ptr<Server>> Server::start(Api& api, ServerOptions options) {
  if (options.socket_path.empty() && options.listen.empty()) {
    return InvalidArgument("socket", "give a unix socket path, a TCP address, or both");
  }
  std::unique_ptr<Server> s(new Server(api, std::move(options)));
  s->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->stop_fd_ < 0) return SysError("eventfd");
  std::vector<std::pair<int, bool>> fds;
  if (!s->options_.socket_path.empty()) {
    int fd = -1;
    RETURN_IF_ERROR(bind_unix(s->options_.socket_path, s->options_.socket_group, &fd));
    fds.push_back({fd, false});
    s->listen_fds_.push_back(fd);
  }
  if (!s->options_.listen.empty()) {
    sockaddr_storage ss;
    socklen_t len = 0;
    bool loopback = false;
    RETURN_IF_ERROR(parse_listen(s->options_.listen, &ss, &len, &loopback));
    if (!loopback && !s->options_.have_token) {
      return InvalidArgument("listen", "'" + s->options_.listen +
                                           "' is not a loopback address: TCP beyond this machine needs "
                                           "--token-file (a bearer token)");
    }
    // Loopback too: every local user can reach a loopback port. The unix socket, whose mode
    // and group say who may connect, is the way without a token.
    if (!s->options_.have_token) {
      return InvalidArgument("listen", "TCP needs --token-file (a bearer token), even on loopback, where any "
                                       "local user could connect; the unix socket needs none");
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return SysError("socket", s->options_.listen);
    s->listen_fds_.push_back(fd);  // closed by the destructor on error
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return SysError("bind", s->options_.listen);
    if (listen(fd, 128) != 0) return SysError("listen", s->options_.listen);
    sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
    s->tcp_address_ = addr_string(bound);
    fds.push_back({fd, true});
  }
  for (auto [fd, tcp] : fds) s->acceptors_.emplace_back([p = s.get(), fd = fd, tcp = tcp] { p->accept_loop(fd, tcp); });
  return s;
}

Server::~Server() {
  stop();
  for (int fd : listen_fds_) close(fd);
  if (stop_fd_ >= 0) close(stop_fd_);
}

size_t Server::connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  stopping_ = true;
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof one);
  for (auto& t : acceptors_) {
    if (t.joinable()) t.join();
  }
  if (!options_.socket_path.empty()) unlink(options_.socket_path.c_str());
  std::unique_lock<std::mutex> lock(mu_);
  drained_.wait(lock, [&] { return active_ == 0; });
}

void Server::accept_loop(int listen_fd, bool tcp) {
  while (!stopping_) {
    pollfd p[2] = {{listen_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int r = poll(p, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || (p[1].revents & POLLIN)) break;
    sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) usleep(50'000);  // let connections finish first
      continue;
    }
    std::string peer = "unix";
    if (tcp) {
      peer = addr_string(ss);
      peer = peer.substr(0, peer.rfind(':'));  // the host: one bucket per host, not per port
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (active_ >= options_.max_connections) {
        FdStream out(fd, stop_fd_);
        HttpResponse busy =
            error_response(503, "too_many_connections", "the server has too many connections open", "connections");
        busy.headers["Retry-After"] = "1";
        auto res = to_beast(busy, false);
        out.write_all(serialize(res), 1000);
        close(fd);
        continue;
      }
      ++active_;
    }
    std::thread([this, fd, tcp, peer] {
      serve_connection(fd, tcp, peer);
      close(fd);
      std::lock_guard<std::mutex> lock(mu_);
      --active_;
      drained_.notify_all();
    }).detach();
  }
}

void Server::serve_connection(int fd, bool tcp, std::string peer) {
  FdStream stream(fd, stop_fd_);
  beast::flat_buffer buffer;
  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(64 * 1024);
    parser.body_limit(api_.options().max_body_bytes);
    beast::error_code ec;
    // Idle until the first byte of the next request (a stop ends the wait); then the
    // whole request must arrive within io_timeout.
    if (buffer.size() == 0) {
      stream.idle = true;
      stream.deadline = Clock::now() + std::chrono::milliseconds(options_.idle_timeout_ms);
      buffer.commit(stream.read_some(buffer.prepare(8192), ec));
      stream.idle = false;
      if (ec) return;
    }
    stream.deadline = Clock::now() + std::chrono::milliseconds(options_.io_timeout_ms);
    bhttp::read(stream, buffer, parser, ec);
    if (ec) {
      if (ec == boost::asio::error::eof || ec == bhttp::error::end_of_stream || ec == beast::error::timeout) return;
      HttpResponse err;
      if (ec == bhttp::error::body_limit) {
        err = error_response(413, "payload_too_large",
                             "the body is larger than " + std::to_string(api_.options().max_body_bytes) + " bytes",
                             "body");
      } else if (ec == bhttp::error::header_limit) {
        err = error_response(431, "headers_too_large", "the request headers are larger than 64 KiB", "headers");
      } else {
        err = error_response(400, "bad_request", "malformed HTTP request: " + ec.message(), "request");
      }
      auto res = to_beast(err, false);
      if (stream.write_all(serialize(res), options_.io_timeout_ms)) drain_and_close_write(fd);
      return;
    }
    auto& msg = parser.get();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string& v = req.headers[name];
      v += v.empty() ? std::string(f.value()) : ", " + std::string(f.value());
    }
    req.body = std::move(msg.body());
    req.over_tcp = tcp;
    req.peer = peer;
    const bool keep_alive = msg.keep_alive() && !stopping_;

    HttpResponse r = api_.handle(req);
    if (r.stream) {
      // Chunked, so the client sees each event as it is produced; the connection ends after.
      bhttp::response<bhttp::empty_body> head{static_cast<bhttp::status>(r.status), 11};
      for (const auto& [k, v] : r.headers) head.set(k, v);
      head.set(bhttp::field::server, "corral");
      head.keep_alive(false);
      head.chunked(true);
      std::ostringstream os;
      os << head.base();
      if (!stream.write_all(os.str(), options_.io_timeout_ms)) return;
      const uint64_t io = options_.io_timeout_ms;
      r.stream([&](std::string_view data) {
        if (data.empty()) return true;
        return stream.write_all(beast::buffers_to_string(bhttp::make_chunk(boost::asio::buffer(data.data(), data.size()))),
                                io);
      });
      stream.write_all(beast::buffers_to_string(bhttp::make_chunk_last()), io);
      return;
    }
    if (req.method == "HEAD") r.body.clear();
    auto res = to_beast(r, keep_alive);
    if (!stream.write_all(serialize(res), options_.io_timeout_ms) || !keep_alive) return;
  }
}

}  // namespace corral::http
