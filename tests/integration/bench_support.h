// Helpers for the measurements tools/bench runs as disabled gtests (pool_bench_test.cc,
// zygote_bench_test.cc): timing, markdown rows with min/median/max, and the bare
// interpreter run the same way hyperfine -N runs it.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace corral::testing {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

inline size_t env_count(const char* name, size_t fallback) {
  const char* v = getenv(name);
  return v && *v ? static_cast<size_t>(std::stoul(v)) : fallback;
}

// "| what | min | median | max | unit, source |"
inline std::string row(const std::string& what, std::vector<double> v, const char* unit, const std::string& source) {
  if (v.empty()) return "| " + what + " | - | - | - | " + source + " |\n";
  std::sort(v.begin(), v.end());
  char buf[512];
  snprintf(buf, sizeof buf, "| %s | %.2f | %.2f | %.2f | %s%s%s |\n", what.c_str(), v.front(), v[v.size() / 2],
           v.back(), unit, source.empty() ? "" : ", ", source.c_str());
  return buf;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One row of tools/bench's table of every peer, appended as a JSON line to the file named by
// CORRAL_BENCH_ROWS (nothing without it): the samples' min/median/max, the median of bare
// python measured in the same loop, and how the row was measured.
inline void record_peer_row(const std::string& what, const std::vector<double>& ms, double bare_median_ms,
                            const std::string& how) {
  const char* path = getenv("CORRAL_BENCH_ROWS");
  if (!path || !*path || ms.empty()) return;
  auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  nlohmann::json j = {{"what", what}, {"min", *lo},         {"median", median(ms)},        {"max", *hi},
                      {"runs", ms.size()}, {"bare_median", bare_median_ms}, {"how", how}};
  std::ofstream(path, std::ios::app) << j.dump() << "\n";
}

// Bare: posix_spawn + wait, stdout to /dev/null, as hyperfine -N would. Returns the time in
// ms, or -1; `status` gets the wait status when given.
inline double bare_run_ms(char* const argv[], int* status = nullptr) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  auto t0 = Clock::now();
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  waitpid(pid, &st, 0);
  if (status) *status = st;
  return ms_since(t0);
}

}  // namespace corral::testing
