// Who may call the API and how often. TCP callers present `Authorization: Bearer <token>`
// (compared in constant time); the unix socket is guarded by its file mode and group. Each
// caller (its token, else its peer) has a token bucket of `rate` requests per second.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace corral::http {

// Constant-time comparison: how long it takes says nothing about where they differ.
bool tokens_equal(const std::string& a, const std::string& b);

// The bearer token in an Authorization header value, or nullopt.
std::optional<std::string> bearer_token(const std::string& authorization);

class RateLimiter {
 public:
  // rate <= 0: unlimited. Burst: max(1, rate) requests at once.
  explicit RateLimiter(double rate_per_second);
  // True if `key` may make a request now; otherwise `retry_after_s` says when it may.
  bool allow(const std::string& key, double* retry_after_s);

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  double rate_, burst_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace corral::http
