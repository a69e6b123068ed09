#include "backends/common/http_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "backends/common/curl_api.h"

namespace corral::http {

StatusOr<Endpoint> Endpoint::parse(const std::string& text) {
  Endpoint e;
  auto starts = [&](const char* p) { return text.rfind(p, 0) == 0; };
  if (text.empty()) return InvalidArgument("endpoint", "is empty");
  if (starts("unix://")) {
    e.unix_path = text.substr(7);
  } else if (text[0] == '/') {
    e.unix_path = text;
  } else if (starts("tcp://")) {
    e.base_url = "http://" + text.substr(6);
  } else if (starts("http://") || starts("https://")) {
    e.base_url = text;
  } else {
    return InvalidArgument("endpoint", "'" + text + "' is not unix:///PATH, /PATH, tcp://HOST:PORT, http(s)://HOST:PORT");
  }
  if (!e.unix_path.empty()) {
    if (e.unix_path[0] != '/') return InvalidArgument("endpoint", "unix socket path must be absolute: " + text);
    e.base_url = "http://localhost";
  }
  while (!e.base_url.empty() && e.base_url.back() == '/') e.base_url.pop_back();
  if (starts("https://")) {
    if (const char* certs = getenv("DOCKER_CERT_PATH"); certs && *certs) {
      e.ca_file = std::string(certs) + "/ca.pem";
      e.cert_file = std::string(certs) + "/cert.pem";
      e.key_file = std::string(certs) + "/key.pem";
    }
  }
  return e;
}

std::string engine_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  std::string b = body;
  while (!b.empty() && isspace(static_cast<unsigned char>(b.back()))) b.pop_back();
  return b.size() > 500 ? b.substr(0, 500) + "..." : b;
}

std::string url_escape(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

struct Client::Handle {
  CURL* curl = nullptr;
};

Client::Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

Client::~Client() {
  auto api = curl_api();
  for (Handle* h : idle_) {
    if (api.ok()) (*api)->easy_cleanup(h->curl);
    delete h;
  }
}

StatusOr<Client::Handle*> Client::take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      Handle* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  ASSIGN_OR_RETURN(const CurlApi* api, curl_api());
  CURL* c = api->easy_init();
  if (!c) return Internal("curl_easy_init failed");
  return new Handle{c};
}

void Client::give_back(Handle* h) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(h);
}

namespace {

struct Transfer {
  const Request* req;
  Response* resp;
  bool aborted = false;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view chunk(data, size * n);
  if (t->req->on_body) {
    if (!t->req->on_body(chunk)) {
      t->aborted = true;
      return 0;
    }
  } else {
    t->resp->body.append(chunk);
  }
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
    while (!value.empty() && isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    t->resp->headers[name] = value;
  }
  return size * n;
}

struct ReadBody {
  const std::string* body;
  size_t off = 0;
};

size_t on_read(char* buf, size_t size, size_t n, void* user) {
  auto* r = static_cast<ReadBody*>(user);
  size_t take = std::min(size * n, r->body->size() - r->off);
  memcpy(buf, r->body->data() + r->off, take);
  r->off += take;
  return take;
}

void set_endpoint(const CurlApi* api, CURL* c, const Endpoint& e) {
  if (!e.unix_path.empty()) api->easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, e.unix_path.c_str());
  if (!e.ca_file.empty()) api->easy_setopt(c, CURLOPT_CAINFO, e.ca_file.c_str());
  if (!e.cert_file.empty()) api->easy_setopt(c, CURLOPT_SSLCERT, e.cert_file.c_str());
  if (!e.key_file.empty()) api->easy_setopt(c, CURLOPT_SSLKEY, e.key_file.c_str());
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
}

}  // namespace

StatusOr<Response> Client::send(const Request& request) {
  ASSIGN_OR_RETURN(const CurlApi* api, curl_api());
  ASSIGN_OR_RETURN(Handle * h, take());
  CURL* c = h->curl;
  api->easy_reset(c);
  set_endpoint(api, c, endpoint_);
  const std::string url = endpoint_.base_url + request.path;
  api->easy_setopt(c, CURLOPT_URL, url.c_str());
  Response resp;
  Transfer t{&request, &resp};
  ReadBody rb{&request.body};
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &t);
  api->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  api->easy_setopt(c, CURLOPT_HEADERDATA, &t);
  if (request.timeout_ms > 0) api->easy_setopt(c, CURLOPT_TIMEOUT_MS, request.timeout_ms);
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10'000L);
  curl_slist* headers = nullptr;
  if (request.method == "GET") {
    api->easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    api->easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else {
    // The body is streamed from memory (no copy, no size limit of POSTFIELDS).
    api->easy_setopt(c, CURLOPT_UPLOAD, 1L);
    api->easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    api->easy_setopt(c, CURLOPT_READDATA, &rb);
    api->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    api->easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    headers = api->slist_append(headers, ("Content-Type: " + request.content_type).c_str());
    headers = api->slist_append(headers, "Expect:");  // no 100-continue round trip
  }
  if (headers) api->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = api->easy_perform(c);
  if (headers) api->slist_free_all(headers);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.aborted)) {
    std::string why = api->easy_strerror(rc);
    api->easy_cleanup(c);  // a failed connection is not reused
    delete h;
    return Status(rc == CURLE_OPERATION_TIMEDOUT ? ErrorCode::kResourceExhausted : ErrorCode::kUnsupported,
                  request.method + " " + request.path + ": cannot talk to the engine at " + endpoint_.describe() +
                      ": " + why,
                  "endpoint");
  }
  long code = 0;
  api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  resp.status = code;
  if (t.aborted) {
    api->easy_cleanup(c);
    delete h;
  } else {
    give_back(h);
  }
  return resp;
}

StatusOr<Response> Client::call(const std::string& step, const Request& request) {
  ASSIGN_OR_RETURN(Response r, send(request));
  if (r.status >= 200 && r.status < 300) return r;
  std::string msg = step + ": " + engine_message(r.body) + " (HTTP " + std::to_string(r.status) + ")";
  ErrorCode code = r.status == 404 ? ErrorCode::kNotFound
                   : r.status == 400 ? ErrorCode::kInvalidArgument
                   : r.status == 409 ? ErrorCode::kInvalidArgument
                                     : ErrorCode::kInternal;
  return Status(code, msg);
}

namespace {

class CurlStream : public RawStream {
 public:
  CurlStream(const CurlApi* api, CURL* c, int fd) : api_(api), c_(c), fd_(fd) {}
  ~CurlStream() override { api_->easy_cleanup(c_); }

  StatusOr<size_t> send_some(std::string_view data) override {
    size_t sent = 0;
    CURLcode rc = api_->easy_send(c_, data.data(), data.size(), &sent);
    if (rc == CURLE_AGAIN) return size_t{0};
    if (rc != CURLE_OK) return Internal(std::string("send to engine: ") + api_->easy_strerror(rc));
    return sent;
  }
  void close_write() override { shutdown(fd_, SHUT_WR); }
  StatusOr<bool> recv_some(std::string* out) override {
    char buf[65536];
    size_t got = 0;
    CURLcode rc = api_->easy_recv(c_, buf, sizeof buf, &got);
    if (rc == CURLE_AGAIN) return true;
    if (rc != CURLE_OK) return Internal(std::string("receive from engine: ") + api_->easy_strerror(rc));
    if (got == 0) return false;
    out->append(buf, got);
    return true;
  }
  int fd() const override { return fd_; }

 private:
  const CurlApi* api_;
  CURL* c_;
  int fd_;
};

}  // namespace

StatusOr<std::unique_ptr<RawStream>> Client::upgrade(const std::string& step, const std::string& path,
                                                     const std::string& body) {
  ASSIGN_OR_RETURN(const CurlApi* api, curl_api());
  CURL* c = api->easy_init();
  if (!c) return Internal("curl_easy_init failed");
  set_endpoint(api, c, endpoint_);
  const std::string url = endpoint_.base_url + path;
  api->easy_setopt(c, CURLOPT_URL, url.c_str());
  api->easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10'000L);
  CURLcode rc = api->easy_perform(c);
  if (rc != CURLE_OK) {
    std::string why = api->easy_strerror(rc);
    api->easy_cleanup(c);
    return Status(ErrorCode::kUnsupported, step + ": cannot connect to the engine at " + endpoint_.describe() + ": " + why,
                  "endpoint");
  }
  curl_socket_t sock = CURL_SOCKET_BAD;
  api->easy_getinfo(c, CURLINFO_ACTIVESOCKET, &sock);
  auto stream = std::make_unique<CurlStream>(api, c, static_cast<int>(sock));
  std::string host = endpoint_.unix_path.empty() ? endpoint_.base_url.substr(endpoint_.base_url.find("//") + 2)
                                                 : "localhost";
  std::string head = "POST " + path + " HTTP/1.1\r\nHost: " + host +
                     "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n" + body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto wait = [&](short events) -> Status {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status(ErrorCode::kResourceExhausted, step + ": the engine did not answer in 30 s");
    pollfd p{stream->fd(), events, 0};
    poll(&p, 1, static_cast<int>(left.count()));
    return Status::Ok();
  };
  size_t off = 0;
  while (off < head.size()) {
    ASSIGN_OR_RETURN(size_t n, stream->send_some(std::string_view(head).substr(off)));
    off += n;
    if (n == 0) RETURN_IF_ERROR(wait(POLLOUT));
  }
  std::string in;
  size_t end;
  while ((end = in.find("\r\n\r\n")) == std::string::npos) {
    size_t before = in.size();
    ASSIGN_OR_RETURN(bool open, stream->recv_some(&in));
    if (!open) return Internal(step + ": the engine closed the connection before answering");
    if (in.size() == before) RETURN_IF_ERROR(wait(POLLIN));
  }
  // "HTTP/1.1 101 UPGRADED"
  long status = 0;
  if (size_t sp = in.find(' '); sp != std::string::npos) status = strtol(in.c_str() + sp + 1, nullptr, 10);
  std::string rest = in.substr(end + 4);
  if (status != 101 && status != 200) {
    // An error body: read what comes within a short while and report the engine's message.
    for (int i = 0; i < 20; ++i) {
      size_t before = rest.size();
      auto open = stream->recv_some(&rest);
      if (!open.ok() || !*open) break;
      if (rest.size() == before) {
        pollfd p{stream->fd(), POLLIN, 0};
        if (poll(&p, 1, 50) <= 0 && !rest.empty()) break;
      }
    }
    size_t brace = rest.find('{');
    std::string msg = step + ": " + engine_message(brace == std::string::npos ? rest : rest.substr(brace)) +
                      " (HTTP " + std::to_string(status) + ")";
    return Status(status == 404 ? ErrorCode::kNotFound : ErrorCode::kInternal, msg);
  }
  stream->pending = std::move(rest);
  return std::unique_ptr<RawStream>(std::move(stream));
}

}  // namespace corral::http
