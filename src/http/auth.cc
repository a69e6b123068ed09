#include "src/http/auth.h"

#include <algorithm>
#include <cmath>

namespace corral::http {

bool tokens_equal(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::optional<std::string> bearer_token(const std::string& authorization) {
  static const std::string kPrefix = "bearer ";
  if (authorization.size() <= kPrefix.size()) return std::nullopt;
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kPrefix[i]) return std::nullopt;
  }
  std::string t = authorization.substr(kPrefix.size());
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.erase(0, 1);
  if (t.empty()) return std::nullopt;
  return t;
}

RateLimiter::RateLimiter(double rate_per_second) : rate_(rate_per_second), burst_(std::max(1.0, rate_per_second)) {}

bool RateLimiter::allow(const std::string& key, double* retry_after_s) {
  if (rate_ <= 0) return true;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (buckets_.size() > 10000) {
    // Forget callers whose buckets have refilled: they are indistinguishable from new ones.
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      const double age = std::chrono::duration<double>(now - it->second.last).count();
      it = it->second.tokens + age * rate_ >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, fresh] = buckets_.try_emplace(key);
  Bucket& b = it->second;
  if (fresh) {
    b.tokens = burst_;
  } else {
    const double elapsed = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
  }
  b.last = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  if (retry_after_s) *retry_after_s = (1 - b.tokens) / rate_;
  return false;
}

}  // namespace corral::http
