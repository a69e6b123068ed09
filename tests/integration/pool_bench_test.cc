// Measurements for the warm pool, printed as a markdown section (never asserted): exec of
// `python3 -c 'print(1)'` in a pooled sandbox against the bare interpreter, and the memory
// each idle pooled sandbox costs with 200 of them at once. Disabled in the test run; run by
// tools/bench-pool, which passes --gtest_also_run_disabled_tests. Environment:
//   CORRAL_BENCH_RUNS (default 100), CORRAL_BENCH_SANDBOXES (200), CORRAL_BENCH_OUT (file).
// DISABLED_ExecOverhead (below) appends where a pooled exec's time goes.
#include <dirent.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "src/session/pool.h"
#include "tests/integration/bench_support.h"
#include "tests/integration/sandbox_fixture.h"


namespace corral::testing {
namespace {

// kB fields of /proc/PID/smaps_rollup.
std::map<std::string, double> smaps_rollup(pid_t pid) {
  std::map<std::string, double> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || line.find("kB") == std::string::npos) continue;
    out[line.substr(0, colon)] = std::stod(line.substr(colon + 1));
  }
  return out;
}

// The memory charged to the cgroup of `pid` (v1 memory controller or v2), in bytes; -1 if none.
double cgroup_memory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string file;
    if (controllers == "memory") file = "/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes";
    if (line.rfind("0::", 0) == 0 && access(("/sys/fs/cgroup" + path + "/memory.current").c_str(), R_OK) == 0) {
      file = "/sys/fs/cgroup" + path + "/memory.current";
    }
    if (file.empty()) continue;
    std::ifstream f(file);
    double v = -1;
    if (f >> v) return v;
  }
  return -1;
}

int own_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// Every process in the pid namespace under `init` (for an idle sandbox: init alone).
std::vector<pid_t> tree(pid_t init) {
  std::vector<pid_t> out{init};
  for (size_t i = 0; i < out.size(); ++i) {
    for (pid_t c : children_of(out[i])) out.push_back(c);
  }
  return out;
}

using PoolBench = SandboxTest;

TEST_F(PoolBench, DISABLED_LatencyAndMemory) {
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 100);
  const size_t count = env_count("CORRAL_BENCH_SANDBOXES", 200);
  std::ostringstream md;
  md << "## Warm pool\n\n";
  md << "Measured by `tools/bench-pool` (`integration_tests --gtest_also_run_disabled_tests "
        "--gtest_filter=PoolBench.*`, " << runs << " runs each, " << count << " idle sandboxes). ";

  // --- latency -----------------------------------------------------------------------------
  char py[] = "/usr/bin/python3", dash_c[] = "-c", code[] = "print(1)";
  char* argv[] = {py, dash_c, code, nullptr};
  for (int i = 0; i < 5; ++i) bare_run_ms(argv);  // warm the page cache
  PoolOptions o;
  o.min_size = 2;
  o.max_size = 4;
  auto pool = Pool::create(executor_, o);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  const SandboxSpec spec{(*pool)->sandbox_policy()};
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "print(1)"};
  std::vector<double> bare, exec_ms, acquire_ms, total_ms;
  int failures = 0;
  for (size_t i = 0; i < runs + 5; ++i) {
    ASSERT_TRUE((*pool)->wait_warm(60'000).ok());  // an idle pool, as the budget says
    double b = bare_run_ms(argv);
    auto t0 = Clock::now();
    auto sb = (*pool)->acquire(spec);
    ASSERT_TRUE(sb.ok()) << sb.status().to_string();
    double a = ms_since(t0);
    auto t1 = Clock::now();
    auto r = executor_.exec(**sb, req);
    double e = ms_since(t1);
    failures += !r.ok() || r->stdout_data != "1\n";
    ASSERT_TRUE((*pool)->release(std::move(sb).value()).ok());
    if (i < 5) continue;  // warm-up
    bare.push_back(b);
    exec_ms.push_back(e);
    acquire_ms.push_back(a);
    total_ms.push_back(a + e);
  }
  std::vector<double> overhead;
  {
    std::vector<double> sb = bare, se = exec_ms;
    std::sort(sb.begin(), sb.end());
    std::sort(se.begin(), se.end());
    overhead.push_back(se[se.size() / 2] - sb[sb.size() / 2]);
  }
  (*pool)->shutdown();
  // What the pool takes off the critical path: a cold create (and its destroy).
  std::vector<double> create_ms, destroy_ms;
  int create_errors = 0;
  for (size_t i = 0; i < std::min<size_t>(runs, 50); ++i) {
    auto c0 = Clock::now();
    auto sb = executor_.create(spec);
    double c = ms_since(c0);
    if (!sb.ok()) {
      ++create_errors;
      continue;
    }
    create_ms.push_back(c);
    auto d0 = Clock::now();
    executor_.destroy(**sb);
    destroy_ms.push_back(ms_since(d0));
  }
  md << "Bare and pooled runs alternate, one of each per iteration; the pool is idle (warm) before each acquire.\n\n";
  md << "| what | min | median | max | unit / command |\n|---|---|---|---|---|\n";
  md << row("bare", bare, "ms", "`/usr/bin/python3 -c 'print(1)'` (posix_spawn + wait)");
  md << row("pooled: exec", exec_ms, "ms", "`Executor::exec` of the same argv in a pre-created sandbox");
  md << row("pooled: acquire", acquire_ms, "ms", "`Pool::acquire` from an idle pool");
  md << row("pooled: acquire + exec", total_ms, "ms", "");
  md << row("for comparison: cold create", create_ms, "ms", "`Executor::create` (what acquire from an idle pool avoids)");
  md << row("for comparison: destroy", destroy_ms, "ms", "`Executor::destroy` (the pool's reaper thread does this)");
  // Each iteration's pooled run against the bare run next to it: the machine's speed drifts
  // between iterations far more than within one.
  std::vector<double> paired;
  for (size_t i = 0; i < bare.size(); ++i) paired.push_back(total_ms[i] - bare[i]);
  char buf[1024];
  snprintf(buf, sizeof buf,
           "\nPooled acquire + exec against the bare run of the same iteration, median of the differences: **%+.2f ms** "
           "(budget 1.5 ms); median pooled exec minus median bare: %+.2f ms. Failed runs: %d. Cold create errors: %d.\n\n",
           median(paired), overhead[0], failures, create_errors);
  md << buf;
  record_peer_row("corral pooled (acquire + exec)", total_ms, median(bare),
                  "`Pool::acquire` from an idle pool + `Executor::exec` of `/usr/bin/python3 -c 'print(1)'`, in process "
                  "(tests/integration/pool_bench_test.cc), alternating with bare posix_spawn + wait");

  // --- 200 idle sandboxes ---------------------------------------------------------------------
  struct rlimit nofile;
  getrlimit(RLIMIT_NOFILE, &nofile);
  const int fds_before = own_fds();
  const std::vector<pid_t> children_before = children_of(getpid());
  PoolOptions many;
  many.min_size = count;
  many.max_size = count;
  many.refill_threads = 2;
  auto t0 = Clock::now();
  auto big = Pool::create(executor_, many);
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  Status warm = (*big)->wait_warm(600'000);
  const double warm_ms = ms_since(t0);
  PoolStats st = (*big)->stats();
  usleep(500'000);  // let the kernel settle lazily freed pages
  struct rlimit nofile_after;
  getrlimit(RLIMIT_NOFILE, &nofile_after);
  const int fds_after = own_fds();
  std::vector<double> pss, uss, rss, cg, per_total;
  for (pid_t init : children_of(getpid())) {
    if (std::find(children_before.begin(), children_before.end(), init) != children_before.end()) continue;
    double p = 0, u = 0, r = 0;
    std::vector<pid_t> counted;
    for (pid_t pid : tree(init)) {
      // A process sharing the memory of one counted already (corral-init's prepared worker
      // shares init's: CLONE_VM) adds none.
      bool shares = false;
      for (pid_t c : counted) shares = shares || syscall(SYS_kcmp, pid, c, KCMP_VM, 0, 0) == 0;
      if (shares) continue;
      counted.push_back(pid);
      auto m = smaps_rollup(pid);
      p += m["Pss"];
      u += m["Private_Clean"] + m["Private_Dirty"];
      r += m["Rss"];
    }
    const double c = cgroup_memory(init);
    pss.push_back(p / 1024);
    uss.push_back(u / 1024);
    rss.push_back(r / 1024);
    if (c >= 0) cg.push_back(c / (1 << 20));
    per_total.push_back(u / 1024 + (c >= 0 ? c / (1 << 20) : 0));
  }
  md << "### " << count << " idle pooled sandboxes at once\n\n";
  snprintf(buf, sizeof buf,
           "Warm-up: %s in %.0f ms (%zu idle, %llu created, %llu create errors%s%s). Supervisor fds: %d before, %d "
           "after (%.1f per sandbox; RLIMIT_NOFILE soft limit %llu before the pool, %llu after: Pool::create raises it).\n\n",
           warm.ok() ? "ok" : "INCOMPLETE", warm_ms, st.idle, static_cast<unsigned long long>(st.created),
           static_cast<unsigned long long>(st.create_errors), st.last_error.empty() ? "" : "; last: ",
           st.last_error.c_str(), fds_before, fds_after,
           st.idle ? static_cast<double>(fds_after - fds_before) / static_cast<double>(st.idle) : 0.0,
           static_cast<unsigned long long>(nofile.rlim_cur), static_cast<unsigned long long>(nofile_after.rlim_cur));
  md << buf;
  md << "| per idle sandbox | min | median | max | unit / source |\n|---|---|---|---|---|\n";
  md << row("processes' PSS", pss, "MiB", "sum of `Pss` in `/proc/PID/smaps_rollup` over the sandbox's processes");
  md << row("processes' USS", uss, "MiB", "`Private_Clean + Private_Dirty` (same files)");
  md << row("processes' RSS", rss, "MiB", "`Rss` (same files; shared pages counted in full)");
  md << row("cgroup memory", cg, "MiB", "`memory.usage_in_bytes` (v1) / `memory.current` (v2) of the sandbox cgroup");
  md << row("USS + cgroup", per_total, "MiB", "");
  md << "\nAn idle sandbox runs no interpreter (corral-init, a copy of the supervisor, and the exec worker it "
        "prepared, which shares init's memory and is counted once), so all of this is beyond the interpreter's own "
        "pages. Kernel memory outside the cgroup (namespaces, mount tables) is not included.\n";
  auto t1 = Clock::now();
  (*big)->shutdown();
  snprintf(buf, sizeof buf, "\nShutdown (destroying all %zu): %.0f ms.\n", st.idle, ms_since(t1));
  md << buf;

  const std::string text = md.str();
  if (const char* out = getenv("CORRAL_BENCH_OUT"); out && *out) {
    std::ofstream(out) << text;
  }
  printf("%s", text.c_str());
  EXPECT_TRUE(warm.ok()) << warm.to_string();
}

// Where a pooled exec's time over bare goes, appended to CORRAL_BENCH_OUT as a markdown
// section (run after LatencyAndMemory by tools/bench-pool): in one sandbox made beforehand,
// `/bin/true` and `python3 -c pass` alternate with the same argv spawned bare,
// CORRAL_BENCH_RUNS pairs each (default 100), each exec after CORRAL_BENCH_IDLE_MS (default
// 30) of idleness (time for corral-init to prepare the next worker; 0: back to back), once
// with this process as it is and once holding CORRAL_BENCH_BALLAST_MB (default 300) of heap,
// as a server's would (a sandbox's corral-init is a copy of the supervisor). Never asserts
// on time.
TEST_F(PoolBench, DISABLED_ExecOverhead) {
  const size_t runs = env_count("CORRAL_BENCH_RUNS", 100);
  const size_t idle_ms = env_count("CORRAL_BENCH_IDLE_MS", 30);
  std::ostringstream md;
  md << "\n### Exec in a sandbox made beforehand, against bare\n\n"
     << "Measured by `PoolBench.DISABLED_ExecOverhead` (same binary): " << runs << " pairs per row, the exec and "
     << "the bare spawn of the same argv alternating which goes first, each pair after " << idle_ms
     << " ms idle (corral-init prepares the next exec's worker meanwhile). \"supervisor heap\": memory the "
     << "measuring process held and wrote, as a server's would; a sandbox's corral-init is a copy of it.\n\n"
     << "| supervisor heap | program | bare median ms | exec median ms | median of paired differences ms |\n"
     << "|---|---|---|---|---|\n";
  for (size_t ballast_mb : {size_t{0}, env_count("CORRAL_BENCH_BALLAST_MB", 300)}) {
    std::vector<char> ballast(ballast_mb << 20, 1);  // written, so present
    auto sb = executor_.create(SandboxSpec{});
    ASSERT_TRUE(sb.ok()) << sb.status().to_string();
    for (std::vector<std::string> argv : {std::vector<std::string>{"/bin/true"},
                                          std::vector<std::string>{"/usr/bin/python3", "-c", "pass"}}) {
      std::vector<char*> raw;
      for (auto& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      ExecRequest req;
      req.argv = argv;
      std::vector<double> bare, in_sandbox, diff;
      for (size_t i = 0; i < runs + 5; ++i) {
        if (idle_ms) {
          usleep(static_cast<useconds_t>(idle_ms * 1000));
          for (auto t = Clock::now(); ms_since(t) < 2;) {
          }  // this CPU awake again before either is timed
        }
        // Alternating which goes first: the first after the pause pays for waking up.
        double b = i % 2 ? bare_run_ms(raw.data()) : 0;
        auto t0 = Clock::now();
        auto r = executor_.exec(**sb, req);
        double e = ms_since(t0);
        if (i % 2 == 0) b = bare_run_ms(raw.data());
        ASSERT_TRUE(r.ok() && r->status() == ExecStatus::kOk);
        if (i < 5) continue;
        bare.push_back(b);
        in_sandbox.push_back(e);
        diff.push_back(e - b);
      }
      char line[256];
      snprintf(line, sizeof line, "| %zu MB | `%s` | %.3f | %.3f | %+.3f |\n", ballast_mb,
               argv.size() == 1 ? argv[0].c_str() : "python3 -c pass", median(bare), median(in_sandbox),
               median(diff));
      md << line;
    }
    executor_.destroy(**sb);
  }
  const std::string text = md.str();
  if (const char* out = getenv("CORRAL_BENCH_OUT"); out && *out) std::ofstream(out, std::ios::app) << text;
  printf("%s", text.c_str());
}

}  // namespace
}  // namespace corral::testing
