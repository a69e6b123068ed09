// Pool: sandboxes for one language and policy, created ahead of time so that a session
// starts on a sandbox that already exists. Background threads keep `min_size` idle ones
// ready, destroy released ones off the caller's path, replace idle ones that grew too old
// or failed a health check. PoolSet keys pools by (language, policy) for the servers.
//
// Reuse: by default (max_uses = 1) a sandbox serves one session and is then destroyed and
// replaced, so nothing one session wrote or started can reach the next. corral cannot yet
// prove a sandbox clean after use (its writable overlay layer and /tmp live in the sandbox's
// own mount namespace, beyond the Executor interface), so max_uses > 1 is an explicit
// opt-in (reuse_keeps_writable_layer) and means: the next session may see files the
// previous one wrote, and a program it started with Executor::exec_detached (an interactive
// driver) still runs; an ordinary exec's processes die with it. What is checked before
// reuse: the sandbox still runs a trivial exec (/bin/true).
//
// Thread-safe: acquire and release may be called from any thread at any time. Creating a
// large pool raises this process's soft RLIMIT_NOFILE toward the hard limit (each sandbox
// holds a few descriptors in the supervisor).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "src/core/executor.h"
#include "src/session/session.h"

namespace corral {

// What acquire() does when every sandbox the pool may hold (max_size) is in use.
enum class Exhaustion {
  kWait,       // block until one is released, at most acquire_timeout_ms
  kFailFast,   // kResourceExhausted at once
  kTemporary,  // create an extra one beyond max_size, destroyed on release
};
const char* exhaustion_name(Exhaustion e);

struct PoolOptions {
  std::string language = "python";  // a language handler name; empty: the policy as given
  Policy policy;                    // adjusted by the language exactly as Session::open does
  size_t min_size = 2;              // idle sandboxes kept ready
  size_t max_size = 8;              // idle + in use + being created (temporaries excluded)
  Exhaustion exhaustion = Exhaustion::kWait;
  uint64_t acquire_timeout_ms = 30'000;  // kWait only
  uint64_t idle_timeout_ms = 0;          // replace a sandbox idle this long; 0: never
  uint64_t max_lifetime_ms = 0;          // replace a sandbox this long after creation; 0: never
  uint32_t max_uses = 1;                 // sessions per sandbox; 1: destroyed after one
  // Required for max_uses > 1: the caller accepts that a reused sandbox keeps the files the
  // previous session wrote (see the header comment).
  bool reuse_keeps_writable_layer = false;
  uint64_t health_check_interval_ms = 0;  // exec /bin/true in idle sandboxes this often; 0: never
  size_t refill_threads = 2;              // sandboxes created in parallel in the background
};

struct PoolStats {
  std::string language;
  size_t idle = 0, busy = 0, creating = 0;
  size_t recycling = 0, destroying = 0;  // released: being checked for reuse / destroyed
  uint64_t created = 0, destroyed = 0;
  uint64_t acquires = 0;
  uint64_t served_idle = 0;       // acquires served by an idle sandbox (the fast path)
  uint64_t created_on_demand = 0; // none idle, room below max_size: one created for this acquire
  uint64_t waits = 0, wait_timeouts = 0, fail_fast = 0, temporaries = 0;
  uint64_t reused = 0;            // sandboxes returned to idle after a use (opt-in only)
  uint64_t expired_idle = 0, expired_lifetime = 0;
  uint64_t health_checks = 0, health_failures = 0;
  uint64_t create_errors = 0;
  std::string last_error;         // the last create error, empty if none
  double acquire_p50_ms = 0, acquire_p99_ms = 0;  // over the last 4096 acquires

  nlohmann::json to_json() const;
};

class Pool : public SandboxSource {
 public:
  // Validates the options (kInvalidArgument naming the field), creates the first sandbox on
  // this thread (so a policy the host cannot run fails here, not in the background), then
  // starts warming to min_size in the background.
  static StatusOr<std::unique_ptr<Pool>> create(Executor& executor, PoolOptions options);
  ~Pool() override;  // shutdown()
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // An idle sandbox, or one created now (by a pool thread) if none is idle and there is room;
  // at max_size, what options.exhaustion says. kInvalidArgument when spec.policy is not this pool's
  // sandbox_policy(); kResourceExhausted on timeout or fail-fast; kUnsupported after shutdown.
  StatusOr<std::unique_ptr<Sandbox>> acquire(const SandboxSpec& spec) override;
  // Takes the sandbox back; it is destroyed in the background (or, when reuse is opted into
  // and uses remain, health-checked there and made idle again). kInvalidArgument (after
  // destroying it) when it did not come from this pool.
  Status release(std::unique_ptr<Sandbox> sandbox) override;

  // Blocks until min_size sandboxes are idle; kResourceExhausted after timeout_ms, with the
  // last create error if there was one.
  Status wait_warm(uint64_t timeout_ms);
  // Destroys every idle sandbox, fails waiting acquires, joins the threads. Sandboxes still
  // in use are destroyed when released. Idempotent.
  void shutdown();

  PoolStats stats() const;
  const PoolOptions& options() const { return options_; }
  // The policy every sandbox of this pool has: options.policy adjusted by the language.
  const Policy& sandbox_policy() const { return policy_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::unique_ptr<Sandbox> sandbox;
    Clock::time_point created, idle_since, checked;
    uint32_t uses = 0;
    bool temporary = false;
  };
  struct Meta {  // of a sandbox handed out
    Clock::time_point created;
    uint32_t uses = 0;
    bool temporary = false;
  };

  Pool(Executor& executor, PoolOptions options, Policy policy);
  void start();
  size_t regular_total_locked() const;
  StatusOr<Entry> make_entry(bool temporary);
  StatusOr<std::unique_ptr<Sandbox>> hand_out_locked(Entry e, Clock::time_point started);
  void record_acquire_locked(Clock::time_point started);
  bool too_old_locked(const Entry& e, Clock::time_point now, bool* by_lifetime) const;
  void destroy_later_locked(std::unique_ptr<Sandbox> sb);
  bool healthy(Sandbox& sb);
  bool check_unlocked(std::unique_lock<std::mutex>& lock, Entry& e);
  void refill_loop();
  void janitor_loop();
  void reaper_loop();

  Executor& ex_;
  const PoolOptions options_;
  const Policy policy_;
  const std::string policy_json_;

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;    // an idle sandbox appeared, or shutdown
  std::condition_variable refill_cv_;  // capacity below min_size, or shutdown
  std::condition_variable janitor_cv_;
  std::condition_variable reaper_cv_;
  std::deque<Entry> idle_;                 // oldest first
  std::map<const Sandbox*, Meta> out_;     // handed out, not yet released
  std::deque<std::unique_ptr<Sandbox>> doomed_;  // to destroy
  std::deque<Entry> recycle_;              // released, to check and make idle again
  size_t creating_ = 0;                    // by the refill threads
  size_t demand_ = 0;                      // acquires waiting for one beyond min_size
  size_t checking_ = 0;                    // idle ones taken out for a health check
  size_t reaping_ = 0;                     // being destroyed by the reaper now
  size_t busy_regular_ = 0;                // handed out, temporaries excluded
  bool stopping_ = false;
  bool reaper_stop_ = false;
  Clock::time_point create_backoff_until_{};
  uint64_t backoff_ms_ = 0;
  PoolStats counters_;
  std::vector<double> acquire_ms_;  // ring buffer
  size_t acquire_next_ = 0;
  std::mutex shutdown_mu_;
  bool joined_ = false;
  std::vector<std::thread> refillers_;
  std::thread janitor_, reaper_;
};

// Pools keyed by (language, policy), created on first use with shared default options — the
// Service's SandboxSource. Beyond max_pools distinct policies, sandboxes are created and
// destroyed directly (no pool), so odd per-request limits cannot multiply idle sandboxes.
struct PoolSetOptions {
  PoolOptions defaults;  // language and policy are taken from each request
  size_t max_pools = 16;
};

class PoolSet : public SandboxSource {
 public:
  PoolSet(Executor& executor, PoolSetOptions options);
  ~PoolSet() override;  // shutdown()

  StatusOr<std::unique_ptr<Sandbox>> acquire(const SandboxSpec& spec) override;
  Status release(std::unique_ptr<Sandbox> sandbox) override;

  // The pool for `language` and `policy` (adjusted by the language as sessions do), created
  // and warming if it did not exist: for pre-warming at server start.
  StatusOr<Pool*> pool_for(const std::string& language, const Policy& policy);
  // Every pool's stats: [{"language", "policy", ...PoolStats}] plus unpooled counts.
  nlohmann::json stats_json() const;
  std::vector<PoolStats> stats() const;
  void shutdown();

 private:
  StatusOr<Pool*> pool_for_key_locked(const std::string& language, const Policy& policy, const std::string& key);

  Executor& ex_;
  const PoolSetOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Pool>> pools_;  // by sandbox policy JSON
  std::map<const Sandbox*, Pool*> owner_;              // nullptr: created unpooled
  uint64_t unpooled_ = 0;
  bool stopped_ = false;
};

}  // namespace corral
