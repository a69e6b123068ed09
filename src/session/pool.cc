#include "src/session/pool.h"

#include <sys/resource.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "src/lang/runner.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kAcquireSamples = 4096;
constexpr uint64_t kHealthExecWallMs = 5'000;
constexpr uint64_t kMaxBackoffMs = 5'000;
constexpr uint64_t kOnDemandCreateMs = 30'000;  // an acquire waiting for a sandbox made for it

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The policy a session in `language` would ask its source for (Session::open's derivation);
// idempotent, so a policy that is already derived maps to itself.
StatusOr<Policy> derive_policy(const std::string& language, const Policy& policy) {
  if (language.empty()) return policy;
  const lang::LanguageHandler* handler = lang::find_language(language);
  if (!handler) return InvalidArgument("language", "unknown language '" + language + "'; one of: " + lang::language_names());
  lang::RunRequest shape;
  shape.language = language;
  shape.policy = policy;
  std::vector<lang::LibrarySource> none;
  return lang::policy_for(*handler, shape, &none);
}

// Each sandbox holds a few descriptors in this process (pidfd, control socket, uid-slot lock,
// cgroup event files: 5 on cgroup v1); a pool of a few hundred outgrows the usual soft limit
// of 1024, so the soft limit is raised toward the hard one (as Go's runtime does at start).
void raise_fd_limit_for(size_t sandboxes) {
  constexpr rlim_t kFdsPerSandbox = 8, kSpare = 256;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t want = kSpare + kFdsPerSandbox * static_cast<rlim_t>(sandboxes);
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want) return;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  setrlimit(RLIMIT_NOFILE, &rl);
}

Status validate(const PoolOptions& o) {
  if (o.max_size == 0) return InvalidArgument("max_size", "must be at least 1");
  if (o.min_size > o.max_size) {
    return InvalidArgument("min_size", "must not exceed max_size (" + std::to_string(o.max_size) + ")");
  }
  if (o.max_uses == 0) return InvalidArgument("max_uses", "must be at least 1");
  if (o.max_uses > 1 && !o.reuse_keeps_writable_layer) {
    return InvalidArgument("max_uses", "reusing a sandbox keeps the files the previous session wrote; set "
                                       "reuse_keeps_writable_layer to accept that, or keep max_uses at 1");
  }
  if (o.refill_threads == 0) return InvalidArgument("refill_threads", "must be at least 1");
  if (o.exhaustion == Exhaustion::kWait && o.acquire_timeout_ms == 0) {
    return InvalidArgument("acquire_timeout_ms", "must be at least 1 with exhaustion wait");
  }
  return Status::Ok();
}

}  // namespace

const char* exhaustion_name(Exhaustion e) {
  switch (e) {
    case Exhaustion::kWait: return "wait";
    case Exhaustion::kFailFast: return "fail_fast";
    case Exhaustion::kTemporary: return "temporary";
  }
  return "?";
}

nlohmann::json PoolStats::to_json() const {
  return {{"language", language},
          {"idle", idle},
          {"busy", busy},
          {"creating", creating},
          {"recycling", recycling},
          {"destroying", destroying},
          {"created", created},
          {"destroyed", destroyed},
          {"acquires", acquires},
          {"served_idle", served_idle},
          {"created_on_demand", created_on_demand},
          {"waits", waits},
          {"wait_timeouts", wait_timeouts},
          {"fail_fast", fail_fast},
          {"temporaries", temporaries},
          {"reused", reused},
          {"expired_idle", expired_idle},
          {"expired_lifetime", expired_lifetime},
          {"health_checks", health_checks},
          {"health_failures", health_failures},
          {"create_errors", create_errors},
          {"last_error", last_error},
          {"acquire_p50_ms", acquire_p50_ms},
          {"acquire_p99_ms", acquire_p99_ms}};
}

// ---- Pool -------------------------------------------------------------------------------

Pool::Pool(Executor& executor, PoolOptions options, Policy policy)
    : ex_(executor),
      options_(std::move(options)),
      policy_(std::move(policy)),
      policy_json_(policy_.to_json().dump()) {
  counters_.language = options_.language;
  acquire_ms_.reserve(kAcquireSamples);
}

StatusOr<std::unique_ptr<Pool>> Pool::create(Executor& executor, PoolOptions options) {
  RETURN_IF_ERROR(validate(options));
  auto policy = derive_policy(options.language, options.policy);
  if (!policy.ok()) return policy.status();
  raise_fd_limit_for(options.max_size);
  std::unique_ptr<Pool> pool(new Pool(executor, std::move(options), std::move(policy).value()));
  if (pool->options_.min_size > 0) {
    auto first = pool->make_entry(false);
    if (!first.ok()) return first.status();
    pool->counters_.created++;
    pool->idle_.push_back(std::move(first).value());
  }
  pool->start();
  return pool;
}

void Pool::start() {
  for (size_t i = 0; i < options_.refill_threads; ++i) refillers_.emplace_back([this] { refill_loop(); });
  janitor_ = std::thread([this] { janitor_loop(); });
  reaper_ = std::thread([this] { reaper_loop(); });
}

Pool::~Pool() { shutdown(); }

size_t Pool::regular_total_locked() const {
  return idle_.size() + checking_ + creating_ + recycle_.size() + busy_regular_;
}

StatusOr<Pool::Entry> Pool::make_entry(bool temporary) {
  // From the language's zygote where the executor runs one (made cold otherwise).
  auto sb = ex_.create(SandboxSpec{policy_, options_.language});
  if (!sb.ok()) return sb.status();
  Entry e;
  e.sandbox = std::move(sb).value();
  e.created = e.idle_since = e.checked = Clock::now();
  e.temporary = temporary;
  return e;
}

bool Pool::too_old_locked(const Entry& e, Clock::time_point now, bool* by_lifetime) const {
  *by_lifetime = false;
  if (options_.max_lifetime_ms && now - e.created >= milliseconds(options_.max_lifetime_ms)) {
    *by_lifetime = true;
    return true;
  }
  return options_.idle_timeout_ms && now - e.idle_since >= milliseconds(options_.idle_timeout_ms);
}

void Pool::destroy_later_locked(std::unique_ptr<Sandbox> sb) {
  if (reaper_stop_) {  // after shutdown: no reaper left, destroy here
    ex_.destroy(*sb);
    counters_.destroyed++;
    return;
  }
  doomed_.push_back(std::move(sb));
  reaper_cv_.notify_one();
}

void Pool::record_acquire_locked(Clock::time_point started) {
  double ms = ms_since(started);
  if (acquire_ms_.size() < kAcquireSamples) {
    acquire_ms_.push_back(ms);
  } else {
    acquire_ms_[acquire_next_] = ms;
  }
  acquire_next_ = (acquire_next_ + 1) % kAcquireSamples;
  counters_.acquires++;
}

StatusOr<std::unique_ptr<Sandbox>> Pool::hand_out_locked(Entry e, Clock::time_point started) {
  e.uses++;
  out_[e.sandbox.get()] = Meta{e.created, e.uses, e.temporary};
  if (!e.temporary) busy_regular_++;
  record_acquire_locked(started);
  return std::move(e.sandbox);
}

StatusOr<std::unique_ptr<Sandbox>> Pool::acquire(const SandboxSpec& spec) {
  const auto started = Clock::now();
  if (spec.policy.to_json().dump() != policy_json_) {
    return InvalidArgument("policy", "differs from the policy of this pool's sandboxes (language '" +
                                         options_.language + "'); acquire with the pool's language and policy");
  }
  const auto deadline = started + milliseconds(options_.acquire_timeout_ms);
  const auto create_deadline = started + milliseconds(kOnDemandCreateMs);
  std::unique_lock<std::mutex> lock(mu_);
  bool waited = false;
  bool demanded = false;  // asked the refill threads for one beyond min_size
  while (true) {
    if (stopping_) {
      if (demanded) demand_--;
      return Unsupported("the pool is shut down", "pool");
    }
    while (!idle_.empty()) {
      Entry e = std::move(idle_.front());
      idle_.pop_front();
      refill_cv_.notify_one();  // below min_size now
      bool by_lifetime;
      if (too_old_locked(e, Clock::now(), &by_lifetime)) {  // the janitor had not got to it yet
        (by_lifetime ? counters_.expired_lifetime : counters_.expired_idle)++;
        destroy_later_locked(std::move(e.sandbox));
        continue;
      }
      if (demanded) {
        demand_--;
        counters_.created_on_demand++;
      } else {
        counters_.served_idle++;
      }
      return hand_out_locked(std::move(e), started);
    }
    if (regular_total_locked() < options_.max_size || (demanded && creating_ > 0)) {
      // Nothing idle but room for one: a refill thread creates it and this call takes it
      // (or whichever idle one appears first). Never created on the caller's thread, so
      // sandbox creation stays bounded by refill_threads however many callers wait.
      if (!demanded) {
        demanded = true;
        demand_++;
        refill_cv_.notify_one();
      }
      const uint64_t errors = counters_.create_errors;
      idle_cv_.wait_until(lock, create_deadline, [&] {
        return stopping_ || !idle_.empty() || counters_.create_errors != errors;
      });
      if (stopping_ || !idle_.empty()) continue;
      demand_--;
      demanded = false;
      if (counters_.create_errors != errors) return Status(ErrorCode::kInternal, counters_.last_error, "pool");
      return Status(ErrorCode::kResourceExhausted,
                    "pool for '" + options_.language + "': no sandbox could be created within " +
                        std::to_string(kOnDemandCreateMs) + " ms",
                    "pool");
    }
    if (demanded) {  // the room went to another acquire meanwhile: at max_size after all
      demand_--;
      demanded = false;
    }
    if (options_.exhaustion == Exhaustion::kTemporary) {
      // At max_size: an extra one, created here and destroyed on release. It lives only as
      // long as this thread (see above): callers that keep it across threads must not use
      // kTemporary.
      lock.unlock();
      auto e = make_entry(true);
      lock.lock();
      if (!e.ok()) {
        counters_.create_errors++;
        counters_.last_error = e.status().to_string();
        return e.status();
      }
      counters_.created++;
      counters_.temporaries++;
      if (stopping_) {
        destroy_later_locked(std::move(e->sandbox));
        return Unsupported("the pool is shut down", "pool");
      }
      return hand_out_locked(std::move(e).value(), started);
    }
    const std::string where = "pool for '" + options_.language + "': all " + std::to_string(options_.max_size) +
                              " sandboxes are in use";
    if (options_.exhaustion == Exhaustion::kFailFast) {
      counters_.fail_fast++;
      return Status(ErrorCode::kResourceExhausted, where + " (exhaustion fail_fast)", "pool");
    }
    if (!waited) {
      waited = true;
      counters_.waits++;
    }
    if (idle_cv_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() && !stopping_ &&
        regular_total_locked() >= options_.max_size) {
      counters_.wait_timeouts++;
      return Status(ErrorCode::kResourceExhausted,
                    where + " and none was released within the acquire timeout of " +
                        std::to_string(options_.acquire_timeout_ms) + " ms",
                    "pool");
    }
  }
}

Status Pool::release(std::unique_ptr<Sandbox> sandbox) {
  if (!sandbox) return InvalidArgument("sandbox", "is null");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = out_.find(sandbox.get());
  if (it == out_.end()) {
    destroy_later_locked(std::move(sandbox));
    return InvalidArgument("sandbox", "was not acquired from this pool (destroyed it)");
  }
  const Meta m = it->second;
  out_.erase(it);
  if (!m.temporary) busy_regular_--;
  Entry e;
  e.sandbox = std::move(sandbox);
  e.created = m.created;
  e.idle_since = e.checked = Clock::now();
  e.uses = m.uses;
  e.temporary = m.temporary;
  bool by_lifetime;
  if (m.temporary || m.uses >= options_.max_uses || stopping_ || too_old_locked(e, e.idle_since, &by_lifetime)) {
    destroy_later_locked(std::move(e.sandbox));
    refill_cv_.notify_one();
    idle_cv_.notify_all();  // room below max_size for a waiting acquire
    return Status::Ok();
  }
  recycle_.push_back(std::move(e));
  reaper_cv_.notify_one();
  return Status::Ok();
}

bool Pool::healthy(Sandbox& sb) {
  ExecRequest req;
  req.argv = {"/bin/true"};
  req.wall_ms = kHealthExecWallMs;
  auto r = ex_.exec(sb, req);
  return r.ok() && r->status() == ExecStatus::kOk;
}

// The health check of an entry taken out of idle_/recycle_, run without the lock (it execs).
bool Pool::check_unlocked(std::unique_lock<std::mutex>& lock, Entry& e) {
  checking_++;
  lock.unlock();
  const bool ok = healthy(*e.sandbox);
  lock.lock();
  checking_--;
  counters_.health_checks++;
  return ok;
}

// Keeps min_size sandboxes idle (or on their way), within max_size; backs off after errors
// so a host that cannot create sandboxes is not hammered.
void Pool::refill_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const size_t ready = idle_.size() + checking_ + creating_ + recycle_.size();
    const bool need = ready < options_.min_size + demand_ && regular_total_locked() < options_.max_size;
    if (!need) {
      refill_cv_.wait(lock);
      continue;
    }
    if (Clock::now() < create_backoff_until_) {
      refill_cv_.wait_until(lock, create_backoff_until_);
      continue;
    }
    creating_++;
    lock.unlock();
    auto e = make_entry(false);
    lock.lock();
    creating_--;
    if (!e.ok()) {
      counters_.create_errors++;
      counters_.last_error = e.status().to_string();
      backoff_ms_ = std::min<uint64_t>(kMaxBackoffMs, std::max<uint64_t>(50, backoff_ms_ * 2));
      create_backoff_until_ = Clock::now() + milliseconds(backoff_ms_);
      idle_cv_.notify_all();
      continue;
    }
    backoff_ms_ = 0;
    counters_.created++;
    if (stopping_) {
      destroy_later_locked(std::move(e->sandbox));
      break;
    }
    idle_.push_back(std::move(e).value());
    idle_cv_.notify_all();
    janitor_cv_.notify_one();
  }
}

// Replaces idle sandboxes past their idle timeout or lifetime, and health-checks idle ones
// (one at a time, taken out of the idle list while checked).
void Pool::janitor_loop() {
  const auto interval = milliseconds(options_.health_check_interval_ms);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    auto now = Clock::now();
    for (auto it = idle_.begin(); it != idle_.end();) {
      bool by_lifetime;
      if (too_old_locked(*it, now, &by_lifetime)) {
        (by_lifetime ? counters_.expired_lifetime : counters_.expired_idle)++;
        destroy_later_locked(std::move(it->sandbox));
        it = idle_.erase(it);
        refill_cv_.notify_one();
      } else {
        ++it;
      }
    }
    if (options_.health_check_interval_ms) {
      auto due = std::find_if(idle_.begin(), idle_.end(), [&](const Entry& e) { return now - e.checked >= interval; });
      if (due != idle_.end()) {
        Entry e = std::move(*due);
        idle_.erase(due);
        const bool ok = check_unlocked(lock, e);
        if (ok && !stopping_) {
          e.checked = Clock::now();
          idle_.push_back(std::move(e));
          idle_cv_.notify_all();
        } else {
          if (!ok) counters_.health_failures++;
          destroy_later_locked(std::move(e.sandbox));
          refill_cv_.notify_one();
          idle_cv_.notify_all();
        }
        continue;
      }
    }
    auto next = Clock::time_point::max();
    for (const Entry& e : idle_) {
      if (options_.idle_timeout_ms) next = std::min(next, e.idle_since + milliseconds(options_.idle_timeout_ms));
      if (options_.max_lifetime_ms) next = std::min(next, e.created + milliseconds(options_.max_lifetime_ms));
      if (options_.health_check_interval_ms) next = std::min(next, e.checked + interval);
    }
    if (next == Clock::time_point::max()) {
      janitor_cv_.wait(lock);
    } else {
      janitor_cv_.wait_until(lock, next);
    }
  }
}

// Destroys released and expired sandboxes off the callers' path, and checks released ones
// that may be reused before they become idle again.
void Pool::reaper_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (!doomed_.empty()) {
      std::unique_ptr<Sandbox> sb = std::move(doomed_.front());
      doomed_.pop_front();
      reaping_++;
      lock.unlock();
      ex_.destroy(*sb);
      sb.reset();
      lock.lock();
      reaping_--;
      counters_.destroyed++;
      continue;
    }
    if (!recycle_.empty()) {
      Entry e = std::move(recycle_.front());
      recycle_.pop_front();
      const bool ok = check_unlocked(lock, e);
      if (ok && !stopping_) {
        e.idle_since = e.checked = Clock::now();
        counters_.reused++;
        idle_.push_back(std::move(e));
        idle_cv_.notify_all();
        janitor_cv_.notify_one();
      } else {
        if (!ok) counters_.health_failures++;
        doomed_.push_back(std::move(e.sandbox));
        refill_cv_.notify_one();
        idle_cv_.notify_all();
      }
      continue;
    }
    if (reaper_stop_) break;
    reaper_cv_.wait(lock);
  }
}

Status Pool::wait_warm(uint64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool warm = idle_cv_.wait_for(lock, milliseconds(timeout_ms), [&] {
    return stopping_ || idle_.size() + checking_ >= options_.min_size;
  });
  if (stopping_) return Unsupported("the pool is shut down", "pool");
  if (warm) return Status::Ok();
  std::string why = counters_.last_error.empty() ? "" : "; last create error: " + counters_.last_error;
  return Status(ErrorCode::kResourceExhausted,
                std::to_string(idle_.size()) + " of " + std::to_string(options_.min_size) +
                    " sandboxes idle after " + std::to_string(timeout_ms) + " ms" + why,
                "pool");
}

void Pool::shutdown() {
  std::lock_guard<std::mutex> once(shutdown_mu_);
  if (joined_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  idle_cv_.notify_all();
  refill_cv_.notify_all();
  janitor_cv_.notify_all();
  for (auto& t : refillers_) t.join();
  if (janitor_.joinable()) janitor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Entry& e : idle_) doomed_.push_back(std::move(e.sandbox));
    idle_.clear();
    for (Entry& e : recycle_) doomed_.push_back(std::move(e.sandbox));
    recycle_.clear();
    reaper_stop_ = true;
  }
  reaper_cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  joined_ = true;
}

PoolStats Pool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PoolStats s = counters_;
  s.idle = idle_.size() + checking_;
  s.busy = out_.size();
  s.creating = creating_;
  s.recycling = recycle_.size();
  s.destroying = doomed_.size() + reaping_;
  if (!acquire_ms_.empty()) {
    std::vector<double> v = acquire_ms_;
    auto at = [&](double q) {
      size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
      return v[i];
    };
    s.acquire_p50_ms = at(0.50);
    s.acquire_p99_ms = at(0.99);
  }
  return s;
}

// ---- PoolSet ----------------------------------------------------------------------------

PoolSet::PoolSet(Executor& executor, PoolSetOptions options) : ex_(executor), options_(std::move(options)) {}

PoolSet::~PoolSet() { shutdown(); }

StatusOr<Pool*> PoolSet::pool_for(const std::string& language, const Policy& policy) {
  auto derived = derive_policy(language, policy);
  if (!derived.ok()) return derived.status();
  const std::string key = derived->to_json().dump();
  std::unique_lock<std::mutex> lock(mu_);
  if (stopped_) return Unsupported("the pool set is shut down", "pool");
  if (auto it = pools_.find(key); it != pools_.end()) return it->second.get();
  if (pools_.size() >= options_.max_pools) {
    return Status(ErrorCode::kResourceExhausted,
                  "already " + std::to_string(options_.max_pools) + " pools (max_pools)", "pool");
  }
  // Created without the lock: its first sandbox takes a cold start.
  lock.unlock();
  PoolOptions o = options_.defaults;
  o.language = language;
  o.policy = *derived;
  auto pool = Pool::create(ex_, std::move(o));
  if (!pool.ok()) return pool.status();
  lock.lock();
  if (stopped_) return Unsupported("the pool set is shut down", "pool");
  auto [it, inserted] = pools_.emplace(key, std::move(pool).value());
  return it->second.get();  // another thread won the race: its pool, ours is destroyed
}

StatusOr<std::unique_ptr<Sandbox>> PoolSet::acquire(const SandboxSpec& spec) {
  const std::string key = spec.policy.to_json().dump();
  Pool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return Unsupported("the pool set is shut down", "pool");
    if (auto it = pools_.find(key); it != pools_.end()) pool = it->second.get();
  }
  if (!pool) {
    // A policy is pooled when it is what a session in its language asks for (the language
    // handler's adjustments already applied) and there is room for another pool.
    auto derived = derive_policy(spec.policy.language, spec.policy);
    bool poolable = derived.ok() && derived->to_json().dump() == key;
    if (poolable) {
      auto p = pool_for(spec.policy.language, spec.policy);
      if (p.ok()) {
        pool = *p;
      } else if (p.status().code() != ErrorCode::kResourceExhausted) {
        return p.status();
      }
    }
  }
  if (!pool) {
    auto sb = ex_.create(spec);
    if (!sb.ok()) return sb.status();
    std::lock_guard<std::mutex> lock(mu_);
    owner_[sb->get()] = nullptr;
    unpooled_++;
    return sb;
  }
  auto sb = pool->acquire(spec);
  if (!sb.ok()) return sb.status();
  std::lock_guard<std::mutex> lock(mu_);
  owner_[sb->get()] = pool;
  return sb;
}

Status PoolSet::release(std::unique_ptr<Sandbox> sandbox) {
  if (!sandbox) return InvalidArgument("sandbox", "is null");
  Pool* pool = nullptr;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = owner_.find(sandbox.get()); it != owner_.end()) {
      known = true;
      pool = it->second;
      owner_.erase(it);
    }
  }
  if (pool) return pool->release(std::move(sandbox));
  Status s = ex_.destroy(*sandbox);
  if (!known) return InvalidArgument("sandbox", "was not acquired from this pool set (destroyed it)");
  return s;
}

std::vector<PoolStats> PoolSet::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PoolStats> out;
  for (const auto& [key, pool] : pools_) out.push_back(pool->stats());
  return out;
}

nlohmann::json PoolSet::stats_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json pools = nlohmann::json::array();
  size_t unpooled_busy = 0;
  for (const auto& [sb, pool] : owner_) unpooled_busy += pool == nullptr;
  for (const auto& [key, pool] : pools_) {
    nlohmann::json j = pool->stats().to_json();
    j["policy"] = pool->sandbox_policy().to_json();
    j["min_size"] = pool->options().min_size;
    j["max_size"] = pool->options().max_size;
    j["exhaustion"] = exhaustion_name(pool->options().exhaustion);
    pools.push_back(std::move(j));
  }
  return {{"pools", pools}, {"unpooled", {{"created", unpooled_}, {"busy", unpooled_busy}}}};
}

void PoolSet::shutdown() {
  std::vector<Pool*> pools;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    for (auto& [key, pool] : pools_) pools.push_back(pool.get());
  }
  for (Pool* p : pools) p->shutdown();
}

}  // namespace corral
