#include "src/http/metrics.h"

#include <cstdio>

namespace corral::http {

std::string prom_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void Metrics::observe(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, status}];
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.counts[i];
  }
  ++h.count;
  h.sum += seconds;
}

namespace {

std::string num(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string Metrics::render(const std::map<std::string, uint64_t>& by_status, size_t running, size_t sessions,
                            const nlohmann::json& pool_stats) const {
  std::string out;
  out += "# HELP corral_executions_total Executions finished, by final status.\n";
  out += "# TYPE corral_executions_total counter\n";
  for (const auto& [status, n] : by_status) {
    out += "corral_executions_total{status=\"" + prom_label(status) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP corral_executions_running Executions running now.\n";
  out += "# TYPE corral_executions_running gauge\n";
  out += "corral_executions_running " + std::to_string(running) + "\n";
  out += "# HELP corral_sessions_active Sessions open now.\n";
  out += "# TYPE corral_sessions_active gauge\n";
  out += "corral_sessions_active " + std::to_string(sessions) + "\n";

  out += "# HELP corral_pool_sandboxes Pooled sandboxes by language and state.\n";
  out += "# TYPE corral_pool_sandboxes gauge\n";
  const nlohmann::json* pools = &pool_stats;
  if (pool_stats.is_object() && pool_stats.contains("pools")) pools = &pool_stats["pools"];
  if (pools->is_array()) {
    for (const auto& p : *pools) {
      if (!p.is_object()) continue;
      const std::string lang = p.value("language", std::string());
      for (const char* state : {"idle", "busy", "creating"}) {
        auto it = p.find(state);
        if (it == p.end() || !it->is_number()) continue;
        out += "corral_pool_sandboxes{language=\"" + prom_label(lang) + "\",state=\"" + state + "\"} " +
               num(it->get<double>()) + "\n";
      }
    }
  }

  std::lock_guard<std::mutex> lock(mu_);
  out += "# HELP corral_http_requests_total HTTP requests by route and status code.\n";
  out += "# TYPE corral_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out += "corral_http_requests_total{route=\"" + prom_label(key.first) + "\",code=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP corral_http_request_duration_seconds HTTP request latency by route.\n";
  out += "# TYPE corral_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    const std::string l = "route=\"" + prom_label(route) + "\"";
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out += "corral_http_request_duration_seconds_bucket{" + l + ",le=\"" + num(kBuckets[i]) + "\"} " +
             std::to_string(h.counts[i]) + "\n";
    }
    out += "corral_http_request_duration_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += "corral_http_request_duration_seconds_sum{" + l + "} " + num(h.sum) + "\n";
    out += "corral_http_request_duration_seconds_count{" + l + "} " + std::to_string(h.count) + "\n";
  }
  return out;
}

}  // namespace corral::http
