// corral pool run: warms a pool for one language, runs the code M times through sessions
// drawn from it (C threads at once), and prints a summary of the runs and the pool's stats —
// for operators sizing a pool and for the benchmark.
#include <boost/program_options.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "backends/registry.h"
#include "src/cli/commands.h"
#include "src/cli/output.h"
#include "src/lang/language.h"
#include "src/session/pool.h"

namespace po = boost::program_options;

namespace corral::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kWarmTimeoutMs = 300'000;
constexpr size_t kOutputShown = 4096;  // per stream and run in --json

struct RunRecord {
  std::string status;  // an exec status name, or "error" when no result came back
  int exit_code = -1;
  double open_ms = 0;  // Session::open: the pool's acquire
  double run_ms = 0;
  std::string stdout_data, stderr_data, error;
};

std::optional<uint64_t> parse_count(const std::string& text, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return std::nullopt;
  return v;
}

nlohmann::json spread(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))]; };
  return {{"min", v.front()}, {"p50", at(0.5)}, {"p99", at(0.99)}, {"max", v.back()}};
}

std::string spread_text(const nlohmann::json& s) {
  if (s.is_null()) return "-";
  char buf[160];
  snprintf(buf, sizeof buf, "min %.2f  p50 %.2f  p99 %.2f  max %.2f", s["min"].get<double>(), s["p50"].get<double>(),
           s["p99"].get<double>(), s["max"].get<double>());
  return buf;
}

int pool_run(const std::vector<std::string>& args) {
  po::options_description desc(
      "usage: corral pool run --lang LANG [--size N] [--runs M] [--concurrency C] (-c CODE | FILE) [options]");
  desc.add_options()("help", "show this help")("lang,l", po::value<std::string>(), "language (see `corral languages`)")(
      "code,c", po::value<std::string>(), "the code to run")("size", po::value<std::string>()->default_value("2"),
                                                             "sandboxes kept idle (min_size)")(
      "runs", po::value<std::string>()->default_value("10"), "how many times to run the code")(
      "concurrency", po::value<std::string>()->default_value("1"), "sessions at once (threads)")(
      "policy", po::value<std::string>(), "policy JSON file")("backend", po::value<std::string>(), "native (default), docker or podman")(
      "image", po::value<std::string>(), "docker/podman: the image sandboxes start from (default $CORRAL_IMAGE)")(
      "json", po::bool_switch(), "print every run, the summary and the pool stats as JSON")(
      "file", po::value<std::string>(), "source file");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (auto stop = parse_options("pool run", args, desc, pos, &vm)) return *stop;
  if (!vm.count("lang")) return usage_error("pool run: --lang is required (one of: " + lang::language_names() + ")");
  const std::string language = vm["lang"].as<std::string>();
  const lang::LanguageHandler* handler = lang::find_language(language);
  if (!handler) return usage_error("pool run: unknown language '" + language + "' (one of: " + lang::language_names() + ")");
  if (vm.count("code") == vm.count("file")) return usage_error("pool run: give the code exactly once: -c CODE or a FILE");
  std::string code;
  if (vm.count("code")) {
    code = vm["code"].as<std::string>();
  } else {
    const std::string path = vm["file"].as<std::string>();
    std::ifstream in(path);
    if (!in) return usage_error("pool run: cannot read " + path + ": " + strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    code = ss.str();
  }
  auto size = parse_count(vm["size"].as<std::string>(), 0, 4096);
  if (!size) return usage_error("--size: a whole number from 0 to 4096, got '" + vm["size"].as<std::string>() + "'");
  auto runs = parse_count(vm["runs"].as<std::string>(), 1, 1'000'000);
  if (!runs) return usage_error("--runs: a whole number from 1 to 1000000, got '" + vm["runs"].as<std::string>() + "'");
  auto concurrency = parse_count(vm["concurrency"].as<std::string>(), 1, 1024);
  if (!concurrency) {
    return usage_error("--concurrency: a whole number from 1 to 1024, got '" + vm["concurrency"].as<std::string>() + "'");
  }
  Policy policy;
  if (vm.count("policy")) {
    auto p = Policy::from_file(vm["policy"].as<std::string>());
    if (!p.ok()) return usage_error("policy: " + p.status().to_string());
    policy = std::move(p).value();
  }
  BackendOptions backend;
  if (vm.count("backend")) backend.name = vm["backend"].as<std::string>();
  if (vm.count("image")) backend.image = vm["image"].as<std::string>();
  auto executor = make_executor(backend);
  if (!executor.ok()) return usage_error("--backend: " + executor.status().to_string());
  const bool json = vm["json"].as<bool>();

  PoolOptions options;
  options.language = handler->name();
  options.policy = policy;
  options.min_size = *size;
  options.max_size = std::max<size_t>({*size, *concurrency, 1});
  options.exhaustion = Exhaustion::kWait;
  options.acquire_timeout_ms = 300'000;
  const auto warm_start = Clock::now();
  auto pool = Pool::create(**executor, options);
  if (!pool.ok()) return usage_error("pool: " + pool.status().to_string());
  if (Status warm = (*pool)->wait_warm(kWarmTimeoutMs); !warm.ok()) return usage_error("pool: " + warm.to_string());
  const double warm_ms = std::chrono::duration<double, std::milli>(Clock::now() - warm_start).count();

  std::vector<RunRecord> records(*runs);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < records.size(); i = next++) {
      RunRecord& rec = records[i];
      SessionOptions so;
      so.language = options.language;
      so.policy = policy;
      so.source = pool->get();
      const auto t0 = Clock::now();
      auto session = Session::open(**executor, so);
      const auto t1 = Clock::now();
      rec.open_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      if (!session.ok()) {
        rec.status = "error";
        rec.error = session.status().to_string();
        continue;
      }
      auto r = (*session)->run(code);
      rec.run_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
      if (!r.ok()) {
        rec.status = "error";
        rec.error = r.status().to_string();
      } else {
        rec.status = exec_status_name(r->status());
        rec.exit_code = r->exit_code;
        rec.stdout_data = r->stdout_data.substr(0, kOutputShown);
        rec.stderr_data = r->stderr_data.substr(0, kOutputShown);
      }
      (*session)->close();
    }
  };
  const auto runs_start = Clock::now();
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < *concurrency; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const double total_ms = std::chrono::duration<double, std::milli>(Clock::now() - runs_start).count();

  std::map<std::string, uint64_t> by_status;
  std::vector<double> open_ms, run_ms;
  size_t ok = 0;
  for (const RunRecord& r : records) {
    by_status[r.status]++;
    ok += r.status == "ok";
    open_ms.push_back(r.open_ms);
    if (r.status != "error") run_ms.push_back(r.run_ms);
  }
  nlohmann::json summary = {{"language", options.language},
                            {"runs", *runs},
                            {"concurrency", *concurrency},
                            {"size", *size},
                            {"by_status", by_status},
                            {"warm_ms", warm_ms},
                            {"total_ms", total_ms},
                            {"runs_per_s", total_ms > 0 ? static_cast<double>(*runs) * 1000.0 / total_ms : 0.0},
                            {"open_ms", spread(open_ms)},
                            {"run_ms", spread(run_ms)}};
  (*pool)->shutdown();
  nlohmann::json stats = (*pool)->stats().to_json();
  if (json) {
    nlohmann::json out_runs = nlohmann::json::array();
    for (const RunRecord& r : records) {
      nlohmann::json j = {{"status", r.status}, {"exit_code", r.exit_code}, {"open_ms", r.open_ms},
                          {"run_ms", r.run_ms}, {"stdout", r.stdout_data}, {"stderr", r.stderr_data}};
      if (!r.error.empty()) j["error"] = r.error;
      out_runs.push_back(std::move(j));
    }
    write_all(1, nlohmann::json{{"summary", summary}, {"pool", stats}, {"runs", out_runs}}.dump(2) + "\n");
  } else {
    printf("pool run: %llu runs of %s, concurrency %llu, pool size %llu (warmed in %.0f ms)\n",
           static_cast<unsigned long long>(*runs), options.language.c_str(),
           static_cast<unsigned long long>(*concurrency), static_cast<unsigned long long>(*size), warm_ms);
    for (const auto& [status, n] : by_status) printf("  %-18s %llu\n", status.c_str(), static_cast<unsigned long long>(n));
    printf("  session open ms   %s\n", spread_text(summary["open_ms"]).c_str());
    printf("  run ms            %s\n", spread_text(summary["run_ms"]).c_str());
    printf("  total %.0f ms, %.1f runs/s\n", total_ms, summary["runs_per_s"].get<double>());
    for (const RunRecord& r : records) {
      if (r.status == "ok") continue;
      printf("  first failure: %s %s%s\n", r.status.c_str(), r.error.c_str(), r.stderr_data.substr(0, 300).c_str());
      break;
    }
    printf("pool stats: %s\n", stats.dump().c_str());
  }
  fflush(stdout);
  return ok == records.size() ? 0 : 1;
}

}  // namespace

int pool_command(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("pool: a subcommand is required (run; see corral pool --help)");
  if (args[0] == "--help" || args[0] == "help") {
    puts("usage: corral pool run --lang LANG [--size N] [--runs M] [--concurrency C] (-c CODE | FILE) [--json]");
    return 0;
  }
  if (args[0] == "run") return pool_run(std::vector<std::string>(args.begin() + 1, args.end()));
  return usage_error("pool: unknown subcommand '" + args[0] + "' (expected: run)");
}

}  // namespace corral::cli
