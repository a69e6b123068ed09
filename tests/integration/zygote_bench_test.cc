// Measurements for the python zygote, printed as a markdown section (never asserted):
// `print(1)` and a pandas snippet, bare vs cold vs forked from the zygote (one-shot, and exec
// in a zygote sandbox made ahead of time, as a warm pool hands out), and HumanEval
// throughput with two workers. Disabled in the test run; tools/bench runs it with
// --gtest_also_run_disabled_tests. Environment:
//   CORRAL_BENCH_RUNS (default 50), CORRAL_BENCH_OUT (file, appended),
//   CORRAL_BENCH_HUMANEVAL_DIR (one NNN.py program per problem; the throughput rows are
//   skipped without it).
#include <dirent.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/session/pool.h"
#include "tests/integration/bench_support.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

using runtime::NativeExecutor;

constexpr char kPandas[] = "import pandas as pd; print(pd.DataFrame({'a':[1,2]}).sum())";

Policy python_policy() {
  auto p = Policy::from_json_text(R"({"seccomp": "python"})");
  return p.ok() ? *p : Policy{};
}

struct Timed {
  std::vector<double> ms;
  int failures = 0;
};

// One sandbox per run (create + exec + destroy), cold or from the zygote.
Timed one_shot(NativeExecutor& ex, const std::string& zygote, const std::string& code, size_t runs) {
  Timed t;
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", code};
  for (size_t i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto r = ex.run_once(SandboxSpec{python_policy(), zygote}, req);
    t.ms.push_back(ms_since(t0));
    t.failures += !r.ok() || r->status() != ExecStatus::kOk;
  }
  return t;
}

// Exec only, each in a sandbox created beforehand and left idle for a moment (what a warm
// pool hands out: corral-init has prepared the exec's worker meanwhile, see runtime/worker.h).
Timed pre_created(NativeExecutor& ex, const std::string& zygote, const std::string& code, size_t runs) {
  Timed t;
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", code};
  for (size_t i = 0; i < runs; ++i) {
    auto sb = ex.create(SandboxSpec{python_policy(), zygote});
    if (!sb.ok()) {
      ++t.failures;
      continue;
    }
    usleep(60'000);
    auto t0 = Clock::now();
    auto r = ex.exec(**sb, req);
    t.ms.push_back(ms_since(t0));
    t.failures += !r.ok() || r->status() != ExecStatus::kOk;
    ex.destroy(**sb);
  }
  return t;
}

// Pool::acquire + exec from an idle pool of python sandboxes, which the pool makes from the
// zygote: what `corral serve --zygote python --pool N` does for a request. Each acquire waits
// (untimed) for the pool to be full and its sandboxes idle for 60 ms, as in pre_created.
// `forked` counts the acquired sandboxes the zygote made.
Timed pooled(NativeExecutor& ex, const std::string& code, size_t runs, size_t* forked) {
  Timed t;
  PoolOptions o;
  o.language = "python";
  o.min_size = 2;
  o.max_size = 4;
  auto pool = Pool::create(ex, o);
  if (!pool.ok()) {
    t.failures = static_cast<int>(runs);
    return t;
  }
  const SandboxSpec spec{(*pool)->sandbox_policy(), "python"};
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", code};
  for (size_t i = 0; i < runs; ++i) {
    if (!(*pool)->wait_warm(60'000).ok()) {
      ++t.failures;
      continue;
    }
    usleep(60'000);
    auto t0 = Clock::now();
    auto sb = (*pool)->acquire(spec);
    if (!sb.ok()) {
      ++t.failures;
      continue;
    }
    auto r = ex.exec(**sb, req);
    t.ms.push_back(ms_since(t0));
    t.failures += !r.ok() || r->status() != ExecStatus::kOk;
    *forked += NativeExecutor::from_zygote(**sb);
    (void)(*pool)->release(std::move(sb).value());
  }
  (*pool)->shutdown();
  return t;
}

Timed bare(const std::string& code, size_t runs) {
  Timed t;
  std::string c = code;
  char* argv[] = {const_cast<char*>("/usr/bin/python3"), const_cast<char*>("-c"), c.data(), nullptr};
  for (size_t i = 0; i < runs; ++i) {
    int st = 0;
    t.ms.push_back(bare_run_ms(argv, &st));
    t.failures += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  return t;
}

std::vector<std::string> read_programs(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 3 && n.substr(n.size() - 3) == ".py") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  for (const auto& n : names) {
    std::ifstream f(dir + "/" + n);
    std::stringstream ss;
    ss << f.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

// `workers` threads take programs off a shared counter; returns {seconds, failures}.
template <typename RunOne>
std::pair<double, int> throughput(const std::vector<std::string>& programs, int workers, RunOne run_one) {
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < programs.size();) failures += !run_one(programs[i]);
    });
  }
  for (auto& t : threads) t.join();
  return {ms_since(t0) / 1000.0, failures.load()};
}

TEST(DISABLED_ZygoteBench, Python) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 50);
  const char* out_path = getenv("CORRAL_BENCH_OUT");
  NativeExecutor ex;
  Status started = ex.start_zygote(runtime::ZygoteOptions{});
  ASSERT_TRUE(started.ok()) << started.to_string();
  auto info = ex.zygote_info()["python"];

  std::ostringstream md;
  md << "## Zygote: python with numpy, pandas and matplotlib imported once\n\n"
     << "Measured in one process by `tests/integration/zygote_bench_test.cc` (run by `tools/bench`): "
     << runs << " runs per row after one warm-up; bare is `posix_spawn` + `waitpid` of `/usr/bin/python3 -c CODE` "
     << "with stdout to /dev/null (as hyperfine -N). The template started in " << info["start_ms"] << " ms "
     << "(python " << info["python"].get<std::string>() << ", preloaded " << info["preloaded"].dump()
     << "; prepared workers copy the " << info.value("prefault_kb", nlohmann::json(0)).dump()
     << " KiB a run of the warm-up writes, see the prefault section).\n"
     << "One-shot rows include creating and destroying the sandbox; pre-created rows time the exec in a sandbox "
     << "made beforehand and left idle for 60 ms (untimed), as a warm pool hands it out.\n\n"
     << "| what | min | median | max | unit |\n|---|---|---|---|---|\n";
  auto emit = [&](const std::string& what, const Timed& t) {
    md << row(what + (t.failures ? " (" + std::to_string(t.failures) + " failed)" : ""), t.ms, "ms", "");
  };
  one_shot(ex, "python", "pass", 2);  // warm-up: page cache, seccomp cache, cgroup subtree
  Timed b1 = bare("print(1)", runs);
  emit("`print(1)`: bare python3", b1);
  emit("`print(1)`: corral cold one-shot (in process)", one_shot(ex, "", "print(1)", runs));
  Timed z1 = one_shot(ex, "python", "print(1)", runs);
  emit("`print(1)`: corral zygote one-shot", z1);
  Timed p1 = pre_created(ex, "python", "print(1)", runs);
  emit("`print(1)`: corral zygote, pre-created sandbox", p1);
  emit("`print(1)`: corral cold, pre-created sandbox", pre_created(ex, "", "print(1)", runs));
  const std::string how = "in process (tests/integration/zygote_bench_test.cc), against bare posix_spawn + wait "
                          "in the same process";
  record_peer_row("corral zygote, one-shot (create + exec + destroy)", z1.ms, median(b1.ms),
                  "`NativeExecutor::run_once` with the python zygote, " + how);
  record_peer_row("corral zygote, pre-created sandbox (exec)", p1.ms, median(b1.ms),
                  "`NativeExecutor::exec` in a zygote sandbox made beforehand, " + how);

  const size_t slow_runs = std::max<size_t>(5, runs / 5);
  Timed bp = bare(kPandas, slow_runs);
  emit("pandas snippet: bare python3 (" + std::to_string(slow_runs) + " runs)", bp);
  Timed zp = one_shot(ex, "python", kPandas, runs);
  emit("pandas snippet: corral zygote one-shot", zp);
  Timed pp = pre_created(ex, "python", kPandas, runs);
  emit("pandas snippet: corral zygote, pre-created sandbox", pp);
  size_t pool_forked = 0;
  Timed ppool = pooled(ex, kPandas, runs, &pool_forked);
  emit("pandas snippet: corral pooled from the zygote (acquire + exec; " + std::to_string(pool_forked) + " of " +
           std::to_string(ppool.ms.size()) + " sandboxes forked)",
       ppool);
  char ratio[512];
  snprintf(ratio, sizeof ratio,
           "\nMedians: pandas snippet bare %.1f ms vs zygote one-shot %.1f ms (%.1fx faster), pre-created %.1f ms "
           "(%.1fx), pooled from the zygote %.1f ms (%.1fx). `print(1)`: zygote pre-created %+.2f ms against bare.\n",
           median(bp.ms), median(zp.ms), median(bp.ms) / median(zp.ms), median(pp.ms), median(bp.ms) / median(pp.ms),
           median(ppool.ms), median(bp.ms) / median(ppool.ms), median(p1.ms) - median(b1.ms));
  md << ratio;

  if (const char* dir = getenv("CORRAL_BENCH_HUMANEVAL_DIR"); dir && *dir) {
    auto programs = read_programs(dir);
    auto bare_one = [](const std::string& code) {
      std::string c = code;
      char* argv[] = {const_cast<char*>("/usr/bin/python3"), const_cast<char*>("-c"), c.data(), nullptr};
      int st = 0;
      return bare_run_ms(argv, &st) >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    };
    auto corral_one = [&](const std::string& code) {
      ExecRequest req;
      req.argv = {"/usr/bin/python3", "-c", code};
      auto r = ex.run_once(SandboxSpec{python_policy(), "python"}, req);
      return r.ok() && r->status() == ExecStatus::kOk;
    };
    md << "\n| HumanEval, " << programs.size() << " problems | workers | bare s | corral zygote s | "
       << "bare runs/s | corral runs/s | failed (bare/corral) | corral throughput / bare |\n"
       << "|---|---|---|---|---|---|---|---|\n";
    for (int workers : {1, 2}) {
      auto [bs, bf] = throughput(programs, workers, bare_one);
      auto [zs, zf] = throughput(programs, workers, corral_one);
      snprintf(ratio, sizeof ratio, "| one sandbox per problem | %d | %.2f | %.2f | %.1f | %.1f | %d/%d | %.2f |\n",
               workers, bs, zs, programs.size() / bs, programs.size() / zs, bf, zf, bs / zs);
      md << ratio;
    }
  }
  md << "\nSandboxes forked from the zygote: " << ex.zygote_hits() << "; cold although asked for: "
     << ex.zygote_fallbacks() << ".\n\n";
  if (out_path) {
    std::ofstream(out_path, std::ios::app) << md.str();
  } else {
    std::cout << md.str();
  }
}

// The zygote rows alone (pandas snippet and `print(1)`, one-shot and pre-created), without
// and with a spare (ZygoteOptions::spare), CORRAL_BENCH_RUNS each (default 50): quick
// before/after comparisons of the zygote path. Fails if a run fails or a sandbox was not
// forked from the template.
TEST(DISABLED_ZygoteBenchDetail, Rows) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 50);
  std::ostringstream md;
  md << "| what | min | median | max | unit |\n|---|---|---|---|---|\n";
  for (bool spare : {false, true}) {
    NativeExecutor ex;
    Status started = ex.start_zygote(runtime::ZygoteOptions{.spare = spare});
    ASSERT_TRUE(started.ok()) << started.to_string();
    one_shot(ex, "python", "pass", 3);  // warm-up
    const std::string mode = spare ? " (spare)" : "";
    auto emit = [&](const std::string& what, const Timed& t) {
      md << row(what + mode + (t.failures ? " (" + std::to_string(t.failures) + " failed)" : ""), t.ms, "ms", "");
      EXPECT_EQ(t.failures, 0) << what << mode;
    };
    emit("pandas snippet: corral zygote one-shot", one_shot(ex, "python", kPandas, runs));
    emit("pandas snippet: corral zygote, pre-created sandbox", pre_created(ex, "python", kPandas, runs));
    emit("`print(1)`: corral zygote, pre-created sandbox", pre_created(ex, "python", "print(1)", runs));
    emit("`print(1)`: corral zygote one-shot", one_shot(ex, "python", "print(1)", runs));
    EXPECT_EQ(ex.zygote_fallbacks(), 0u);
  }
  std::cout << md.str();
}

// Where a zygote sandbox's time goes, without and with a spare: medians of create, exec and
// destroy for the pandas snippet, CORRAL_BENCH_RUNS each (default 30).
TEST(DISABLED_ZygoteBenchDetail, Phases) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 30);
  for (bool spare : {false, true}) {
    NativeExecutor ex;
    ASSERT_TRUE(ex.start_zygote(runtime::ZygoteOptions{.spare = spare}).ok());
    one_shot(ex, "python", "pass", 3);  // warm-up
    std::vector<double> c, e, d;
    for (size_t i = 0; i < runs; ++i) {
      auto t0 = Clock::now();
      auto sb = ex.create(SandboxSpec{python_policy(), "python"});
      c.push_back(ms_since(t0));
      ASSERT_TRUE(sb.ok()) << sb.status().to_string();
      ASSERT_TRUE(NativeExecutor::from_zygote(**sb));
      ExecRequest req;
      req.argv = {"/usr/bin/python3", "-c", kPandas};
      t0 = Clock::now();
      auto r = ex.exec(**sb, req);
      e.push_back(ms_since(t0));
      ASSERT_TRUE(r.ok() && r->status() == ExecStatus::kOk);
      t0 = Clock::now();
      ASSERT_TRUE(ex.destroy(**sb).ok());
      d.push_back(ms_since(t0));
    }
    printf("pandas snippet%s: create %.2f ms, exec %.2f ms, destroy %.2f ms (medians of %zu)\n",
           spare ? " (spare)" : "", median(c), median(e), median(d), runs);
  }
}

// Page faults of the exec itself (getrusage in the forked interpreter: its counters start at
// the fork) and one-shot times, for `pass` and the pandas snippet, CORRAL_BENCH_RUNS each
// (default 20), with the default ZygoteOptions (CORRAL_BENCH_SPARE=0|1 overrides `spare`).
// Unlike times, fault counts do not depend on what else the machine runs: on a host where
// each fault is expensive they say where an exec's time goes. Fails if a run fails or a
// sandbox was not forked from the template.
TEST(DISABLED_ZygoteBenchDetail, Faults) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 20);
  runtime::ZygoteOptions o;
  if (const char* spare = getenv("CORRAL_BENCH_SPARE"); spare && *spare) o.spare = std::string(spare) == "1";
  NativeExecutor ex;
  ASSERT_TRUE(ex.start_zygote(o).ok());
  one_shot(ex, "python", "pass", 3);  // warm-up
  for (const std::string& code : {std::string("pass"), std::string(kPandas)}) {
    ExecRequest req;
    req.argv = {"/usr/bin/python3", "-c",
                code + "\nimport resource as _r; print('FAULTS', _r.getrusage(_r.RUSAGE_SELF).ru_minflt)"};
    std::vector<double> faults, ms;
    for (size_t i = 0; i < runs; ++i) {
      auto t0 = Clock::now();
      auto r = ex.run_once(SandboxSpec{python_policy(), "python"}, req);
      ms.push_back(ms_since(t0));
      ASSERT_TRUE(r.ok() && r->status() == ExecStatus::kOk) << (r.ok() ? r->stderr_data : r.status().to_string());
      auto at = r->stdout_data.rfind("FAULTS ");
      ASSERT_NE(at, std::string::npos) << r->stdout_data;
      faults.push_back(std::stod(r->stdout_data.substr(at + 7)));
    }
    printf("%s: exec page faults median %.0f, one-shot %.2f ms median of %zu%s\n", code == "pass" ? "pass" : "pandas",
           median(faults), median(ms), runs, o.spare ? " (spare)" : " (no spare)");
  }
  EXPECT_EQ(ex.zygote_fallbacks(), 0u);
}

// ZygoteOptions::prefault on and off: the exec in a zygote sandbox made beforehand for the
// pandas snippet and for code the warm-up does not run (a groupby, numpy alone, a plain
// loop), CORRAL_BENCH_RUNS each (default 30), as a markdown section (CORRAL_BENCH_OUT, as
// above). Fails if a run fails.
TEST(DISABLED_ZygoteBench, Prefault) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 30);
  const std::vector<std::pair<std::string, std::string>> snippets = {
      {"pandas snippet", kPandas},
      {"pandas groupby", "import pandas as pd, numpy as np; df = pd.DataFrame({'k': np.arange(100) % 7, "
                         "'v': np.arange(100.0)}); print(df.groupby('k').v.mean().round(2).to_dict())"},
      {"numpy matmul", "import numpy as np; a = np.ones((100, 100)); print((a @ a).sum())"},
      {"plain loop", "print(sum(i * i for i in range(10000)))"}};
  std::ostringstream md;
  md << "## Zygote prefault: exec in a sandbox made beforehand, with and without\n\n"
     << "`ZygoteOptions::prefault`: the template profiles once which of its pages a run of the warm-up writes, "
     << "and a sandbox's prepared worker copies them while the sandbox is idle. The snippets other than the "
     << "first are code the warm-up does not run. " << runs << " runs per row, each in a sandbox made beforehand "
     << "and left idle 60 ms (untimed); by `tests/integration/zygote_bench_test.cc`.\n\n"
     << "| what | prefault | min | median | max | unit |\n|---|---|---|---|---|---|\n";
  for (bool prefault : {false, true}) {
    NativeExecutor ex;
    runtime::ZygoteOptions o;
    o.prefault = prefault;
    ASSERT_TRUE(ex.start_zygote(o).ok());
    const std::string kb = ex.zygote_info()["python"].value("prefault_kb", nlohmann::json(0)).dump();
    one_shot(ex, "python", "pass", 3);  // warm-up
    for (const auto& [what, code] : snippets) {
      Timed t = pre_created(ex, "python", code, runs);
      EXPECT_EQ(t.failures, 0) << what;
      md << row(what + " | " + (prefault ? "on (" + kb + " KiB)" : "off"), t.ms, "ms", "");
    }
  }
  md << "\n";
  if (const char* out_path = getenv("CORRAL_BENCH_OUT")) {
    std::ofstream(out_path, std::ios::app) << md.str();
  } else {
    std::cout << md.str();
  }
}

}  // namespace
}  // namespace corral::testing
