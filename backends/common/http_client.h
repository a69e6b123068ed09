// The HTTP client the container backends talk to their engine with: libcurl (loaded on first
// use, see curl_api.h) over a unix socket or TCP, with TLS for https:// endpoints. Keeps
// connections alive between requests; an upgraded ("hijacked") connection for exec streams is
// its own connection. Failures are Status values carrying the engine's own error message.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/status.h"

namespace corral::http {

struct Endpoint {
  std::string unix_path;  // set for unix sockets
  std::string base_url;   // "http://localhost" for unix sockets, else "http[s]://host:port"
  std::string ca_file, cert_file, key_file;  // TLS client settings (https only)

  // "unix:///run/x.sock", "/run/x.sock", "tcp://host:2375", "http://host:2375",
  // "https://host:2376". TLS files come from DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem)
  // when that is set.
  static StatusOr<Endpoint> parse(const std::string& text);
  std::string describe() const { return unix_path.empty() ? base_url : "unix://" + unix_path; }
};

struct Request {
  std::string method = "GET";
  std::string path;  // with the query string, already escaped
  std::string body;
  std::string content_type = "application/json";
  long timeout_ms = 0;  // 0: none
  // Streams the body instead of collecting it; returning false aborts the transfer.
  std::function<bool(std::string_view)> on_body;
};

struct Response {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

// A raw bidirectional byte stream after an HTTP upgrade (Docker's exec attach).
class RawStream {
 public:
  virtual ~RawStream() = default;
  // Sends what it can without blocking; returns the bytes taken (0 when the socket is full).
  virtual StatusOr<size_t> send_some(std::string_view data) = 0;
  // Half-closes the sending side (the program sees EOF on stdin).
  virtual void close_write() = 0;
  // Reads what is available (appends); returns false at end of stream.
  virtual StatusOr<bool> recv_some(std::string* out) = 0;
  // For poll(2).
  virtual int fd() const = 0;
  // Bytes that arrived with the response headers, before the raw stream began.
  std::string pending;
};

class Client {
 public:
  explicit Client(Endpoint endpoint);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }

  // Any HTTP status comes back as a Response; a transport failure (engine not running,
  // refused, timed out) is a Status naming the endpoint.
  StatusOr<Response> send(const Request& request);
  // send(), then a non-2xx status becomes a Status: "<step>: <engine's message> (HTTP 404)".
  // A 404 is kNotFound, 400 kInvalidArgument, other failures kInternal.
  StatusOr<Response> call(const std::string& step, const Request& request);

  // POSTs `body` to `path` asking to upgrade the connection, and returns the raw stream.
  StatusOr<std::unique_ptr<RawStream>> upgrade(const std::string& step, const std::string& path,
                                               const std::string& body);

 private:
  struct Handle;
  StatusOr<Handle*> take();
  void give_back(Handle* h);

  Endpoint endpoint_;
  std::mutex mu_;
  std::vector<Handle*> idle_;
};

// The engine's error message from a JSON error body ({"message": "..."}), else the body.
std::string engine_message(const std::string& body);
// Percent-encoding for query values.
std::string url_escape(std::string_view s);

}  // namespace corral::http
