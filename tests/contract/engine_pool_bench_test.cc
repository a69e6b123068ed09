// Pooled language runs on the container backends, measured fairly (never asserted on
// timings). Every measurement starts from an idle, settled pool (the sandbox used last
// destroyed, its replacement created and idle, untimed) and, after its acquire, waits
// (untimed) for the replacement that acquire asked for, so the pool's background work
// (removing a container, creating the next one) never competes with what is timed; the
// pooled run and the CLI exec are also timed without that second wait, as a service meets
// the pool. Each iteration times a pooled language run, a plain Executor::exec and the
// engine's own CLI exec (`docker exec` / `podman exec`), each in a fresh pooled sandbox (the
// state a pooled request finds), the last two once more in the same sandbox; a few one-shot
// runs (a fresh container each) are timed for the pooling ratio.
//
// Disabled in the test run; tools/bench-engines runs it with
// --gtest_also_run_disabled_tests --gtest_filter='*EnginePoolBench*/ENGINE'. Environment:
//   CORRAL_BENCH_RUNS (default 30), CORRAL_BENCH_ONESHOT_RUNS (10),
//   CORRAL_BENCH_OUT (markdown, appended), CORRAL_BENCH_TSV (one line per engine, appended:
//   engine, then medians in ms: pooled acquire + run with the refill done first, CLI exec
//   (first in a fresh pooled sandbox), one-shot, then pooled acquire + run and CLI exec with the
//   refill in flight).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "src/session/pool.h"
#include "src/session/session.h"
#include "tests/contract/contract_fixture.h"
#include "tests/integration/bench_support.h"

namespace corral {
namespace {

using testing::Clock;
using testing::env_count;
using testing::median;
using testing::ms_since;
using testing::row;

// An idle pool with nothing in flight: min_size idle, none being created, checked or
// destroyed, and only `held` handed out.
bool settle(Pool& pool, size_t held, uint64_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    PoolStats s = pool.stats();
    if (s.idle >= pool.options().min_size && s.creating == 0 && s.destroying == 0 && s.recycling == 0 &&
        s.busy == held) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// The engine's CLI, spawned and waited for (as hyperfine -N runs it), output to /dev/null;
// the time in ms, or -1 when it failed.
double cli_run_ms(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = Clock::now();
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  waitpid(pid, &st, 0);
  const double ms = ms_since(t0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? ms : -1;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

using EnginePoolBench = Contract;

// A sandbox taken from the pool for a measurement, given back however the iteration ends
// (the pool destroys and replaces it in the background).
struct Borrowed {
  Pool& pool;
  std::unique_ptr<Sandbox> sb;
  ~Borrowed() {
    if (sb) (void)pool.release(std::move(sb));
  }
};

TEST_P(EnginePoolBench, DISABLED_PooledRun) {
  const std::string engine = GetParam();
  ASSERT_TRUE(container()) << "container engines only";
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 30);
  const size_t oneshots = env_count("CORRAL_BENCH_ONESHOT_RUNS", 10);
  const std::string code = "pass";
  const size_t warmup = 3;

  PoolOptions o;
  o.language = "python";
  o.min_size = 2;
  o.max_size = 4;
  auto pool = Pool::create(*executor_, o);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  ASSERT_TRUE((*pool)->wait_warm(120'000).ok());
  const SandboxSpec spec{(*pool)->sandbox_policy()};
  ExecRequest plain;
  plain.argv = {"/usr/bin/python3", "-c", code};
  std::vector<double> acquire_ms, run_ms, total_ms, settle_ms;
  std::vector<double> exec_first_ms, exec_again_ms, cli_first_ms, cli_again_ms, quiet_total_ms, cli_busy_ms;
  int failures = 0, cli_failures = 0;
  // Each measurement starts from a settled pool (untimed) and a sandbox in the same state:
  // fresh from the pool, nothing exec'd in it yet.
  auto settled = [&] {
    const auto s0 = Clock::now();
    const bool ok = settle(**pool, 0, 120'000);
    EXPECT_TRUE(ok) << (*pool)->stats().to_json().dump();
    return ok ? ms_since(s0) : -1.0;
  };
  for (size_t i = 0; i < runs + warmup; ++i) {
    const bool keep = i >= warmup;
    // 1. The pooled language run: what one pooled request costs.
    const double waited = settled();
    ASSERT_GE(waited, 0);
    SessionOptions so;
    so.language = "python";
    so.source = pool->get();
    const auto t0 = Clock::now();
    auto session = Session::open(*executor_, so);
    const double a = ms_since(t0);
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    const auto t1 = Clock::now();
    auto r = (*session)->run(code);
    const double e = ms_since(t1);
    failures += !r.ok() || r->status() != ExecStatus::kOk;
    (*session)->close();
    // 1b. The same, but the run waits (untimed) until the replacement the acquire asked for
    // is idle: no background work at all while it runs.
    ASSERT_GE(settled(), 0);
    {
      const auto q0 = Clock::now();
      auto quiet = Session::open(*executor_, so);
      const double qa = ms_since(q0);
      ASSERT_TRUE(quiet.ok()) << quiet.status().to_string();
      ASSERT_TRUE(settle(**pool, 1, 120'000));
      const auto q1 = Clock::now();
      auto qr = (*quiet)->run(code);
      const double qe = ms_since(q1);
      failures += !qr.ok() || qr->status() != ExecStatus::kOk;
      (*quiet)->close();
      if (keep) quiet_total_ms.push_back(qa + qe);
    }
    // 2. A plain exec of the program in a fresh pooled sandbox, then once more in it.
    ASSERT_GE(settled(), 0);
    {
      auto sb = (*pool)->acquire(spec);
      ASSERT_TRUE(sb.ok()) << sb.status().to_string();
      Borrowed b{**pool, std::move(sb).value()};
      ASSERT_TRUE(settle(**pool, 1, 120'000));  // the replacement idle: nothing in flight
      for (auto* into : {&exec_first_ms, &exec_again_ms}) {
        const auto x0 = Clock::now();
        auto x = executor_->exec(*b.sb, plain);
        const double ms = ms_since(x0);
        failures += !x.ok() || x->status() != ExecStatus::kOk;
        if (keep) into->push_back(ms);
      }
    }
    // 3. The engine's CLI exec of the program into a fresh pooled sandbox, then once more.
    ASSERT_GE(settled(), 0);
    {
      auto sb = (*pool)->acquire(spec);
      ASSERT_TRUE(sb.ok()) << sb.status().to_string();
      Borrowed b{**pool, std::move(sb).value()};
      ASSERT_TRUE(settle(**pool, 1, 120'000));  // the replacement idle: nothing in flight
      const std::vector<std::string> cli = {engine, "exec", "-u", "1000:1000", b.sb->id(), "/usr/bin/python3", "-c", code};
      for (auto* into : {&cli_first_ms, &cli_again_ms}) {
        const double ms = cli_run_ms(cli);
        cli_failures += ms < 0;
        if (keep && ms >= 0) into->push_back(ms);
      }
    }
    // 3b. The CLI's exec into a fresh pooled sandbox at once, while the replacement its
    // acquire asked for is being created (as the pooled run in 1 meets it).
    ASSERT_GE(settled(), 0);
    {
      auto sb = (*pool)->acquire(spec);
      ASSERT_TRUE(sb.ok()) << sb.status().to_string();
      Borrowed b{**pool, std::move(sb).value()};
      const double ms =
          cli_run_ms({engine, "exec", "-u", "1000:1000", b.sb->id(), "/usr/bin/python3", "-c", code});
      cli_failures += ms < 0;
      if (keep && ms >= 0) cli_busy_ms.push_back(ms);
    }
    if (!keep) continue;
    settle_ms.push_back(waited);
    acquire_ms.push_back(a);
    run_ms.push_back(e);
    total_ms.push_back(a + e);
  }
  ASSERT_GE(settled(), 0);
  const PoolStats stats = (*pool)->stats();
  (*pool)->shutdown();

  // One-shot, for the pooling ratio: a fresh container per run (create, exec, remove).
  std::vector<double> oneshot_ms;
  for (size_t i = 0; i < oneshots + 1; ++i) {
    const auto t0 = Clock::now();
    auto r = executor_->run_once(spec, plain);
    const double ms = ms_since(t0);
    failures += !r.ok() || r->status() != ExecStatus::kOk;
    if (i > 0) oneshot_ms.push_back(ms);
  }

  const std::string cli_text = "`" + engine + " exec -u 1000:1000 SANDBOX /usr/bin/python3 -c " + code + "`";
  std::ostringstream md;
  md << "### Pooled language run on " << engine << " (an idle, settled pool before every measurement)\n\n";
  md << "Measured by `tools/bench-engines` (`contract_tests --gtest_also_run_disabled_tests "
        "--gtest_filter='*EnginePoolBench*/"
     << engine << "'`), " << runs << " iterations after " << warmup
     << " warm-up ones, a pool of python sandboxes (min_size 2), image `" << test_image()
     << "`. Every measurement starts, untimed, once the pool has settled: the sandbox used last destroyed, its "
        "replacement created, " << o.min_size << " idle and nothing in flight (`settle` below). Each iteration "
        "times, in turn: a pooled language run (the acquire makes the pool create a replacement in the background, "
        "as it does in service); the same with the run held back until that replacement is idle; a plain exec "
        "in a fresh pooled sandbox, then a second one in it; the CLI's exec into a fresh pooled sandbox, then a "
        "second one (these four also once the replacement is idle); the CLI's exec into a fresh pooled sandbox at "
        "once after the acquire. CLI times are spawn + wait, output to /dev/null (as `hyperfine -N`).\n\n";
  md << "| what | min | median | max | unit / command |\n|---|---|---|---|---|\n";
  md << row("pooled: acquire", acquire_ms, "ms", "`Session::open` with the pool as its source (`Pool::acquire`)");
  md << row("pooled: run", run_ms, "ms",
            "`Session::run(\"" + code + "\")`: one exec (create + start) that writes the source, runs "
            "`python3 main.py` and lists artifacts");
  md << row("**pooled: acquire + run**", total_ms, "ms", "what one pooled request costs");
  md << row("pooled: acquire + run, refill done first", quiet_total_ms, "ms",
            "the same, but the run starts (untimed wait) once the replacement the acquire triggered is idle");
  md << row("plain exec, first in the sandbox", exec_first_ms, "ms", "`Executor::exec` of `/usr/bin/python3 -c " + code + "`");
  md << row("plain exec, second in the sandbox", exec_again_ms, "ms", "the same, again");
  md << row("**CLI exec, first in the sandbox**", cli_first_ms, "ms", cli_text);
  md << row("CLI exec, second in the sandbox", cli_again_ms, "ms", "the same, again");
  md << row("CLI exec, first, replacement being created meanwhile", cli_busy_ms, "ms",
            "the same as the first, but at once after the acquire (as the pooled run meets the pool)");
  md << row("one-shot", oneshot_ms, "ms",
            "`Executor::run_once` of `/usr/bin/python3 -c " + code + "`: create, exec, remove (" +
                std::to_string(oneshots) + " runs after 1 warm-up)");
  md << row("untimed settle before a pooled run", settle_ms, "ms", "destroy of the last sandbox + create of the next");
  const double pooled = median(quiet_total_ms), busy = median(total_ms), x = median(cli_first_ms),
               x_busy = median(cli_busy_ms), one = median(oneshot_ms);
  md << "\nMedian pooled acquire + run (refill done first) / median CLI exec (first in the sandbox, refill done "
        "first): **"
     << fmt("%.2f", x > 0 ? pooled / x : 0) << "** (both with the replacement being created meanwhile: "
     << fmt("%.2f", x_busy > 0 ? busy / x_busy : 0) << "); median one-shot / median pooled acquire + run: **"
     << fmt("%.1f", pooled > 0 ? one / pooled : 0) << "x** (" << fmt("%.1f", busy > 0 ? one / busy : 0)
     << "x). Failed runs: " << failures << ", failed CLI execs: " << cli_failures << ". Pool: " << stats.created
     << " created, " << stats.served_idle << " of " << stats.acquires << " acquires served by an idle sandbox.\n\n";
  const std::string text = md.str();
  if (const char* out = getenv("CORRAL_BENCH_OUT"); out && *out) std::ofstream(out, std::ios::app) << text;
  if (const char* tsv = getenv("CORRAL_BENCH_TSV"); tsv && *tsv) {
    std::ofstream(tsv, std::ios::app) << engine << "\t" << fmt("%.1f", pooled) << "\t" << fmt("%.1f", x) << "\t"
                                      << fmt("%.1f", one) << "\t" << fmt("%.1f", busy) << "\t" << fmt("%.1f", x_busy)
                                      << "\n";
  }
  printf("%s", text.c_str());
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(cli_failures, 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, EnginePoolBench, ::testing::Values("docker", "podman"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace corral
