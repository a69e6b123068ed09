// The warm pool on the native backend: pre-warming, refill, the three exhaustion strategies,
// one session per sandbox (proved with a marker file), idle timeout, max lifetime, health
// checks, concurrency, shutdown leaving nothing behind, sessions and PoolSet on top.
#include <dirent.h>
#include <signal.h>

#include <atomic>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "src/session/pool.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Sandbox cgroups this process owns ("n<pid>-..." in the corral subtree; other processes
// running sandboxes on the same host have their own).
int own_sandbox_cgroups(runtime::NativeExecutor& ex) {
  auto driver = ex.cgroups();
  if (!driver.ok()) return 0;
  const std::string mine = "n" + std::to_string(getpid()) + "-";
  int n = 0;
  for (const std::string& dir : (*driver)->subtree_dirs()) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) n += e->d_type == DT_DIR && std::string(e->d_name).rfind(mine, 0) == 0;
    closedir(d);
  }
  return n;
}

// Polls `done` for up to `timeout_ms`; the pool's background work is asynchronous.
template <typename F>
bool eventually(F done, int timeout_ms = 20'000) {
  auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < until) {
    if (done()) return true;
    usleep(10'000);
  }
  return done();
}

class PoolTest : public SandboxTest {
 protected:
  std::unique_ptr<Pool> make(PoolOptions o) {
    auto p = Pool::create(executor_, std::move(o));
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? std::move(p).value() : nullptr;
  }
  static PoolOptions sized(size_t min, size_t max, Exhaustion e = Exhaustion::kWait) {
    PoolOptions o;
    o.min_size = min;
    o.max_size = max;
    o.exhaustion = e;
    return o;
  }
  ExecResult sh(Sandbox& sb, const std::string& script) {
    ExecRequest req;
    req.argv = {"/bin/sh", "-c", script};
    auto r = executor_.exec(sb, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }
};

TEST_F(PoolTest, PrewarmCreatesMinSize) {
  auto pool = make(sized(3, 5));
  ASSERT_TRUE(pool);
  ASSERT_TRUE(pool->wait_warm(30'000).ok());
  PoolStats s = pool->stats();
  EXPECT_EQ(s.idle, 3u);
  EXPECT_EQ(s.created, 3u);
  EXPECT_EQ(s.busy, 0u);
}

TEST_F(PoolTest, AcquireIsServedFromIdleThenRefilled) {
  auto pool = make(sized(2, 4));
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  auto sb = pool->acquire(SandboxSpec{pool->sandbox_policy()});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  PoolStats s = pool->stats();
  EXPECT_EQ(s.served_idle, 1u);
  EXPECT_EQ(s.created_on_demand, 0u);
  EXPECT_EQ(s.busy, 1u);
  EXPECT_EQ(sh(**sb, "echo pooled").stdout_data, "pooled\n");
  // The background refill brings idle back to min_size while this one is in use.
  EXPECT_TRUE(eventually([&] { return pool->stats().idle == 2; }));
  EXPECT_EQ(pool->stats().created, 3u);
  ASSERT_TRUE(pool->release(std::move(sb).value()).ok());
  EXPECT_TRUE(eventually([&] { return pool->stats().destroyed == 1; }));
  s = pool->stats();
  EXPECT_EQ(s.busy, 0u);
  EXPECT_EQ(s.acquires, 1u);
  EXPECT_GT(s.acquire_p50_ms, 0);
}

TEST_F(PoolTest, PolicyMismatchIsInvalidArgument) {
  auto pool = make(sized(0, 1));
  ASSERT_TRUE(pool);
  Policy other = pool->sandbox_policy();
  other.limits.memory_bytes = 64ull << 20;
  auto sb = pool->acquire(SandboxSpec{other});
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(sb.status().field(), "policy");
  // Bad options name the field.
  PoolOptions bad = sized(3, 2);
  auto p = Pool::create(executor_, bad);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().field(), "min_size");
  bad = sized(0, 2);
  bad.language = "cobol";
  p = Pool::create(executor_, bad);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().field(), "language");
}

TEST_F(PoolTest, WaitBlocksUntilReleaseAndTimesOut) {
  PoolOptions o = sized(1, 1, Exhaustion::kWait);
  o.acquire_timeout_ms = 20'000;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  auto first = pool->acquire(spec);
  ASSERT_TRUE(first.ok());
  std::atomic<bool> got{false};
  StatusOr<std::unique_ptr<Sandbox>> second = Status(ErrorCode::kInternal, "not run");
  std::thread waiter([&] {
    second = pool->acquire(spec);
    got = true;
  });
  usleep(300'000);
  EXPECT_FALSE(got.load()) << "acquire returned while the only sandbox was in use";
  EXPECT_EQ(pool->stats().waits, 1u);
  ASSERT_TRUE(pool->release(std::move(first).value()).ok());
  waiter.join();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(sh(**second, "echo after wait").stdout_data, "after wait\n");

  // While `second` is held, a short timeout expires with a clear error.
  PoolOptions quick = o;
  quick.acquire_timeout_ms = 200;
  quick.min_size = 0;
  auto small = make(quick);
  ASSERT_TRUE(small);
  auto held = small->acquire(spec);
  ASSERT_TRUE(held.ok());
  auto t0 = Clock::now();
  auto timed_out = small->acquire(spec);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(200));
  EXPECT_EQ(timed_out.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(timed_out.status().message().find("acquire timeout of 200 ms"), std::string::npos)
      << timed_out.status().to_string();
  EXPECT_EQ(small->stats().wait_timeouts, 1u);
  ASSERT_TRUE(small->release(std::move(held).value()).ok());
  ASSERT_TRUE(pool->release(std::move(second).value()).ok());
}

TEST_F(PoolTest, FailFastErrorsImmediately) {
  auto pool = make(sized(1, 1, Exhaustion::kFailFast));
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  auto first = pool->acquire(spec);
  ASSERT_TRUE(first.ok());
  auto second = pool->acquire(spec);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(second.status().message().find("fail_fast"), std::string::npos) << second.status().to_string();
  PoolStats s = pool->stats();
  EXPECT_EQ(s.fail_fast, 1u);
  EXPECT_EQ(s.waits, 0u);
  ASSERT_TRUE(pool->release(std::move(first).value()).ok());
}

TEST_F(PoolTest, TemporaryCreatesAnExtraAndDestroysIt) {
  auto pool = make(sized(1, 1, Exhaustion::kTemporary));
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  auto regular = pool->acquire(spec);
  ASSERT_TRUE(regular.ok());
  auto extra = pool->acquire(spec);
  ASSERT_TRUE(extra.ok()) << extra.status().to_string();
  EXPECT_NE((*regular)->id(), (*extra)->id());
  EXPECT_EQ(sh(**extra, "echo extra").stdout_data, "extra\n");
  PoolStats s = pool->stats();
  EXPECT_EQ(s.temporaries, 1u);
  EXPECT_EQ(s.busy, 2u);
  const uint64_t destroyed = s.destroyed;
  const uint64_t created = s.created;
  ASSERT_TRUE(pool->release(std::move(extra).value()).ok());
  EXPECT_TRUE(eventually([&] { return pool->stats().destroyed == destroyed + 1; }));
  // The extra is not kept: the pool still holds max_size (1) regular sandboxes, in use.
  s = pool->stats();
  EXPECT_EQ(s.busy, 1u);
  EXPECT_EQ(s.idle, 0u);
  EXPECT_EQ(s.created, created);
  ASSERT_TRUE(pool->release(std::move(regular).value()).ok());
}

TEST_F(PoolTest, ASandboxServesOneSessionOnly) {
  auto pool = make(sized(1, 1));
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto sb = pool->acquire(spec);
    ASSERT_TRUE(sb.ok()) << sb.status().to_string();
    EXPECT_TRUE(ids.insert((*sb)->id()).second) << "handed out twice: " << (*sb)->id();
    // Nothing an earlier session wrote is visible, in the workdir or in /tmp.
    ExecResult clean = sh(**sb, "ls -A /sandbox /tmp | grep -c marker; true");
    EXPECT_EQ(clean.stdout_data, "0\n") << "round " << i;
    EXPECT_EQ(sh(**sb, "echo x > /sandbox/marker && echo x > /tmp/marker && echo ok").stdout_data, "ok\n");
    ASSERT_TRUE(pool->release(std::move(sb).value()).ok());
  }
  EXPECT_EQ(pool->stats().reused, 0u);
}

TEST_F(PoolTest, ReuseIsAnExplicitOptInAndKeepsFiles) {
  PoolOptions o = sized(1, 1);
  o.max_uses = 2;
  auto refused = Pool::create(executor_, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "max_uses");

  o.reuse_keeps_writable_layer = true;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  auto a = pool->acquire(spec);
  ASSERT_TRUE(a.ok());
  const std::string id = (*a)->id();
  sh(**a, "echo x > /sandbox/marker; sleep 100 &");
  ASSERT_TRUE(pool->release(std::move(a).value()).ok());
  ASSERT_TRUE(eventually([&] { return pool->stats().reused == 1; }));
  auto b = pool->acquire(spec);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->id(), id);
  // As documented: the writable layer is kept; no process of the previous use survives.
  EXPECT_EQ(sh(**b, "cat /sandbox/marker; cat /proc/[0-9]*/comm | grep -c '^sleep$'; true").stdout_data, "x\n0\n");
  ASSERT_TRUE(pool->release(std::move(b).value()).ok());
  // Two uses spent: the next one is a fresh sandbox.
  auto c = pool->acquire(spec);
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*c)->id(), id);
  ASSERT_TRUE(pool->release(std::move(c).value()).ok());
}

TEST_F(PoolTest, IdleTimeoutReplacesSandboxes) {
  PoolOptions o = sized(1, 2);
  o.idle_timeout_ms = 300;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  EXPECT_TRUE(eventually([&] {
    PoolStats s = pool->stats();
    return s.expired_idle >= 2 && s.idle == 1 && s.destroyed >= 2;
  }));
  EXPECT_EQ(pool->stats().expired_lifetime, 0u);
}

TEST_F(PoolTest, MaxLifetimeReplacesSandboxes) {
  PoolOptions o = sized(1, 2);
  o.max_lifetime_ms = 300;
  o.max_uses = 10;
  o.reuse_keeps_writable_layer = true;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  EXPECT_TRUE(eventually([&] {
    PoolStats s = pool->stats();
    return s.expired_lifetime >= 2 && s.idle == 1;
  }));
  // One in use past its lifetime is destroyed on release, not made idle again.
  auto sb = pool->acquire(SandboxSpec{pool->sandbox_policy()});
  ASSERT_TRUE(sb.ok());
  usleep(400'000);
  const uint64_t reused = pool->stats().reused;
  ASSERT_TRUE(pool->release(std::move(sb).value()).ok());
  usleep(200'000);
  EXPECT_EQ(pool->stats().reused, reused);
  EXPECT_EQ(pool->stats().expired_idle, 0u);
}

TEST_F(PoolTest, HealthCheckReplacesABrokenSandbox) {
  const size_t before = children_of(getpid()).size();
  PoolOptions o = sized(1, 1);
  o.health_check_interval_ms = 100;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  ASSERT_TRUE(eventually([&] { return pool->stats().health_checks >= 1; }));
  EXPECT_EQ(pool->stats().health_failures, 0u);
  // Break the idle sandbox from outside: its corral-init (a child of this process, the
  // supervisor) is killed, as the OOM killer or an operator might.
  std::vector<pid_t> inits = children_of(getpid());
  ASSERT_EQ(inits.size(), before + 1);
  ASSERT_EQ(kill(inits.back(), SIGKILL), 0);
  EXPECT_TRUE(eventually([&] {
    PoolStats s = pool->stats();
    return s.health_failures == 1 && s.idle == 1 && s.created == 2;
  }));
  auto sb = pool->acquire(SandboxSpec{pool->sandbox_policy()});
  ASSERT_TRUE(sb.ok());
  EXPECT_EQ(sh(**sb, "echo healthy").stdout_data, "healthy\n");
  ASSERT_TRUE(pool->release(std::move(sb).value()).ok());
}

// A sandbox acquired on a short-lived thread outlives it (corral-init is tied to its
// supervisor's control socket, not to the thread that asked for it).
TEST_F(PoolTest, ASandboxOutlivesTheThreadThatAcquiredIt) {
  auto pool = make(sized(0, 2));
  ASSERT_TRUE(pool);
  StatusOr<std::unique_ptr<Sandbox>> sb = Status(ErrorCode::kInternal, "not run");
  std::thread([&] { sb = pool->acquire(SandboxSpec{pool->sandbox_policy()}); }).join();
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  EXPECT_EQ(pool->stats().created_on_demand, 1u);
  usleep(100'000);
  EXPECT_EQ(sh(**sb, "echo still here").stdout_data, "still here\n");
  ASSERT_TRUE(pool->release(std::move(sb).value()).ok());
}

TEST_F(PoolTest, ConcurrentAcquireRunRelease) {
  PoolOptions o = sized(4, 8, Exhaustion::kWait);
  o.acquire_timeout_ms = 120'000;
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  const SandboxSpec spec{pool->sandbox_policy()};
  std::mutex mu;
  std::set<std::string> in_use, ever;
  std::atomic<int> failures{0}, twice{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        auto sb = pool->acquire(spec);
        if (!sb.ok()) {
          ++failures;
          ADD_FAILURE() << sb.status().to_string();
          continue;
        }
        const std::string id = (*sb)->id();
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!in_use.insert(id).second || !ever.insert(id).second) ++twice;
        }
        ExecRequest req;
        req.argv = {"/bin/sh", "-c", "echo " + std::to_string(t * 100 + i)};
        auto r = executor_.exec(**sb, req);
        if (!r.ok() || r->stdout_data != std::to_string(t * 100 + i) + "\n") ++failures;
        {
          std::lock_guard<std::mutex> lock(mu);
          in_use.erase(id);
        }
        if (!pool->release(std::move(sb).value()).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(twice.load(), 0);
  EXPECT_EQ(ever.size(), 200u);
  // Quiet again: every sandbox created is idle or destroyed, nothing is in use.
  ASSERT_TRUE(eventually([&] {
    PoolStats s = pool->stats();
    return s.busy == 0 && s.creating == 0 && s.destroying == 0 && s.idle == 4;
  }));
  PoolStats s = pool->stats();
  EXPECT_EQ(s.acquires, 200u);
  EXPECT_EQ(s.created, s.destroyed + s.idle);
  EXPECT_EQ(s.served_idle + s.created_on_demand, 200u);
  EXPECT_EQ(s.temporaries, 0u);
  EXPECT_LE(s.acquire_p50_ms, s.acquire_p99_ms);
  nlohmann::json j = s.to_json();
  EXPECT_EQ(j["acquires"], 200);
}

TEST_F(PoolTest, ShutdownLeavesNothingBehind) {
  const size_t children = children_of(getpid()).size();
  const int cgroups = own_sandbox_cgroups(executor_);
  auto pool = make(sized(3, 4));
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  auto held = pool->acquire(SandboxSpec{pool->sandbox_policy()});
  ASSERT_TRUE(held.ok());
  // The refill brings idle back to 3 beside the one in use.
  EXPECT_TRUE(eventually([&] { return children_of(getpid()).size() == children + 4 && pool->stats().idle == 3; }));
  pool->shutdown();
  // Idle ones are gone; the one in use is destroyed when it comes back.
  EXPECT_EQ(children_of(getpid()).size(), children + 1);
  auto after = pool->acquire(SandboxSpec{pool->sandbox_policy()});
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), ErrorCode::kUnsupported);
  ASSERT_TRUE(pool->release(std::move(held).value()).ok());
  EXPECT_EQ(children_of(getpid()).size(), children);
  EXPECT_EQ(own_sandbox_cgroups(executor_), cgroups);
  PoolStats s = pool->stats();
  EXPECT_EQ(s.created, s.destroyed);
  pool.reset();  // the destructor after an explicit shutdown is a no-op
}

TEST_F(PoolTest, SessionDrawsFromThePool) {
  PoolOptions o = sized(1, 2);
  auto pool = make(o);
  ASSERT_TRUE(pool && pool->wait_warm(30'000).ok());
  SessionOptions so;
  so.language = o.language;
  so.policy = o.policy;
  so.source = pool.get();
  auto s = Session::open(executor_, so);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(pool->stats().served_idle, 1u);
  auto r = (*s)->run("print(6 * 7)");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "42\n") << r->stderr_data;
  ASSERT_TRUE((*s)->close().ok());
  EXPECT_TRUE(eventually([&] { return pool->stats().destroyed == 1; }));
  // A session in another language cannot take this pool's sandboxes.
  so.language = "bash";
  auto wrong = Session::open(executor_, so);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(PoolTest, PoolSetKeysByLanguageAndPolicy) {
  PoolSetOptions o;
  o.defaults.min_size = 1;
  o.defaults.max_size = 2;
  o.max_pools = 2;
  PoolSet set(executor_, o);
  auto run = [&](const std::string& language, const std::string& code, Policy policy = {}) {
    SessionOptions so;
    so.language = language;
    so.policy = std::move(policy);
    so.source = &set;
    auto s = Session::open(executor_, so);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    if (!s.ok()) return std::string();
    auto r = (*s)->run(code);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->stdout_data : std::string();
  };
  EXPECT_EQ(run("python", "print('a')"), "a\n");
  EXPECT_EQ(run("python", "print('b')"), "b\n");
  EXPECT_EQ(run("bash", "echo c"), "c\n");
  nlohmann::json j = set.stats_json();
  ASSERT_EQ(j["pools"].size(), 2u) << j.dump();
  // A third distinct policy is over max_pools: served unpooled, still correct.
  Policy small;
  small.limits.memory_bytes = 128ull << 20;
  EXPECT_EQ(run("python", "print('d')", small), "d\n");
  j = set.stats_json();
  EXPECT_EQ(j["pools"].size(), 2u);
  EXPECT_EQ(j["unpooled"]["created"], 1);
  EXPECT_EQ(j["unpooled"]["busy"], 0);
  uint64_t acquires = 0;
  for (const PoolStats& s : set.stats()) acquires += s.acquires;
  EXPECT_EQ(acquires, 3u);
  auto pre = set.pool_for("python", Policy{});
  ASSERT_TRUE(pre.ok());
  EXPECT_EQ((*pre)->options().language, "python");
  set.shutdown();
}

}  // namespace
}  // namespace corral::testing
