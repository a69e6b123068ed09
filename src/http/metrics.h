// Prometheus metrics for /metrics (text exposition format 0.0.4): HTTP requests by route and
// status code, request latency histograms by route, executions by final status, running
// executions, open sessions and pool gauges. Routes are templates ("/v1/sessions/{id}/run"),
// never raw paths, so a client cannot blow up the label set.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace corral::http {

class Metrics {
 public:
  void observe(const std::string& route, int status, double seconds);
  // The whole exposition. `pool_stats` is PoolSet::stats_json() (or null: no pool).
  std::string render(const std::map<std::string, uint64_t>& by_status, size_t running, size_t sessions,
                     const nlohmann::json& pool_stats) const;

  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
};

// A label value escaped for the text format (backslash, quote, newline).
std::string prom_label(const std::string& v);

}  // namespace corral::http
