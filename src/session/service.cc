#include "src/session/service.h"

#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <thread>

#include "src/core/sandbox_path.h"
#include "src/lang/language.h"
#include "src/security/security_policy.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t ms_since(Clock::time_point t) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

// 128 bits from the kernel's CSPRNG as 32 hex digits: ids are capabilities, not counters.
StatusOr<std::string> random_id() {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = getrandom(b + got, sizeof b - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SysError("getrandom", "session id");
    got += static_cast<size_t>(n);
  }
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

// Lower case with '_' and '.' folded to '-': how wheel, sdist and npm names are compared.
std::string fold_name(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '_' || c == '.') c = '-';
  }
  return s;
}

bool valid_library_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.' || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '@' || c == '+';
  });
}


// ServiceOptions::executor, which the service does not own, behind the unique_ptr it keeps.
class BorrowedExecutor : public Executor {
 public:
  explicit BorrowedExecutor(Executor& ex) : ex_(ex) {}
  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override { return ex_.create(spec); }
  StatusOr<ExecResult> exec(Sandbox& sb, const ExecRequest& req) override { return ex_.exec(sb, req); }
  Status put_files(Sandbox& sb, const std::vector<FileEntry>& files) override { return ex_.put_files(sb, files); }
  StatusOr<std::vector<FileEntry>> get_files(Sandbox& sb, const std::vector<std::string>& paths,
                                             uint64_t max_bytes) override {
    return ex_.get_files(sb, paths, max_bytes);
  }
  Status destroy(Sandbox& sb) override { return ex_.destroy(sb); }
  Features features() const override { return ex_.features(); }
  StatusOr<ExecResult> exec_detached(Sandbox& sb, const ExecRequest& req) override {
    return ex_.exec_detached(sb, req);
  }
  StatusOr<StepResult> exec_step(Sandbox& sb, const StepRequest& req) override { return ex_.exec_step(sb, req); }

 private:
  Executor& ex_;
};

}  // namespace

struct Service::State {
  struct Entry {
    std::shared_ptr<Session> session;
    std::string language;
    bool interactive = false;
    Clock::time_point opened;
    std::shared_ptr<std::atomic<uint64_t>> runs = std::make_shared<std::atomic<uint64_t>>(0);
  };
  mutable std::mutex mu;
  std::condition_variable idle;  // running dropped
  std::map<std::string, Entry> sessions;
  size_t running = 0;
  bool stopping = false;
  std::map<std::string, uint64_t> by_status;

  std::mutex languages_mu;
  std::optional<nlohmann::json> languages;

  // One admitted execution: counted in `running` from admission to destruction.
  class Admission {
   public:
    explicit Admission(State* st) : st_(st) {}
    Admission(const Admission&) = delete;
    ~Admission() {
      if (!admitted_) return;
      std::lock_guard<std::mutex> lock(st_->mu);
      --st_->running;
      st_->idle.notify_all();
    }
    Status admit(size_t max) {
      std::lock_guard<std::mutex> lock(st_->mu);
      if (st_->stopping) return Status(ErrorCode::kUnsupported, "the service is shutting down", "service");
      if (st_->running >= max) {
        return Status(ErrorCode::kResourceExhausted,
                      std::to_string(max) + " executions are already running; retry shortly", "max_concurrent");
      }
      ++st_->running;
      admitted_ = true;
      return Status::Ok();
    }
    void record(const StatusOr<ExecResult>& r) {
      std::lock_guard<std::mutex> lock(st_->mu);
      ++st_->by_status[r.ok() ? exec_status_name(r->status()) : "error"];
    }

   private:
    State* st_;
    bool admitted_ = false;
  };

  // What run() and command() share: find, admit, count.
  template <typename Fn>
  static StatusOr<ExecResult> run_in(Service& svc, const std::string& id, const RunOptions& options, Fn fn);
};

Service::Service(ServiceOptions options, std::unique_ptr<Executor> executor)
    : options_(std::move(options)), executor_(std::move(executor)), state_(std::make_unique<State>()) {}

StatusOr<std::unique_ptr<Service>> Service::create(ServiceOptions options) {
  if (options.max_concurrent == 0) return InvalidArgument("max_concurrent", "must be at least 1");
  if (!options.library_dir.empty()) {
    struct stat st;
    if (stat(options.library_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return InvalidArgument("library_dir", "'" + options.library_dir + "' is not a directory");
    }
  }
  if (options.executor) {
    auto borrowed = std::make_unique<BorrowedExecutor>(*options.executor);
    return std::unique_ptr<Service>(new Service(std::move(options), std::move(borrowed)));
  }
  auto ex = make_executor(options.backend);
  if (!ex.ok()) return ex.status();
  return std::unique_ptr<Service>(new Service(std::move(options), std::move(ex).value()));
}

Service::~Service() { shutdown(); }

// Library names from a request -> host paths beneath library_dir: the exact entry, else the
// newest-sorting entry named "<name>-<version>..." (wheels, sdists, npm tarballs, gems).
static StatusOr<std::vector<std::string>> resolve_libraries(const std::string& dir,
                                                            const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (names.empty()) return out;
  if (dir.empty()) {
    return InvalidArgument("libraries", "this server has no library directory (corral serve --library-dir); "
                                        "sandboxes have no network to fetch packages");
  }
  std::vector<std::string> entries;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') entries.push_back(e->d_name);
    }
    closedir(d);
  } else {
    return SysError("open library directory", dir);
  }
  std::sort(entries.begin(), entries.end());
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string field = "libraries[" + std::to_string(i) + "]";
    const std::string& name = names[i];
    if (!valid_library_name(name)) {
      return InvalidArgument(field, "'" + name.substr(0, 100) +
                                        "': a library is named by its package name (letters, digits, - _ . @ +), "
                                        "never a path");
    }
    std::string found;
    const std::string folded = fold_name(name);
    for (const auto& e : entries) {
      if (e == name) {
        found = e;
        break;
      }
      const std::string fe = fold_name(e);
      if (fe.size() > folded.size() + 1 && fe.compare(0, folded.size(), folded) == 0 && fe[folded.size()] == '-' &&
          fe[folded.size() + 1] >= '0' && fe[folded.size() + 1] <= '9') {
        found = e;  // sorted: the last match is the highest version
      }
    }
    if (found.empty()) return Status(ErrorCode::kNotFound, "'" + name + "' is not in the library directory", field);
    out.push_back(dir + "/" + found);
  }
  return out;
}

namespace {

Status limits_to_options(const RequestLimits& limits, const ServiceOptions& so, SessionOptions* o) {
  if (limits.timeout_ms) {
    if (*limits.timeout_ms == 0 || *limits.timeout_ms > so.max_timeout_ms) {
      return InvalidArgument("timeout_ms", "must be from 1 to " + std::to_string(so.max_timeout_ms));
    }
    o->default_timeout_ms = *limits.timeout_ms;
    o->policy.limits.wall_ms = *limits.timeout_ms;
  } else {
    o->policy.limits.wall_ms = std::min<uint64_t>(o->policy.limits.wall_ms, so.max_timeout_ms);
  }
  if (limits.memory_bytes) {
    if (*limits.memory_bytes < (4ull << 20) || *limits.memory_bytes > (64ull << 30)) {
      return InvalidArgument("memory_bytes", "must be from 4194304 (4 MiB) to 68719476736 (64 GiB)");
    }
    o->policy.limits.memory_bytes = *limits.memory_bytes;
  }
  if (limits.security_preset) {
    auto sp = security::SecurityPolicy::preset(*limits.security_preset);
    if (!sp.ok()) {
      std::string names;
      for (const auto& n : security::SecurityPolicy::preset_names()) names += (names.empty() ? "" : ", ") + n;
      return InvalidArgument("security_preset", "unknown preset '" + *limits.security_preset + "'; one of: " + names);
    }
    o->security = std::move(sp).value();
  }
  return Status::Ok();
}

Status check_language(const std::string& language) {
  if (!lang::find_language(language)) {
    return InvalidArgument("language", "unknown language '" + language.substr(0, 100) + "'; one of: " +
                                           lang::language_names());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ExecResult> Service::execute(const ExecuteRequest& request) {
  RETURN_IF_ERROR(check_language(request.language));
  SessionOptions so;
  so.language = request.language;
  so.source = options_.source;
  RETURN_IF_ERROR(limits_to_options(request.limits, options_, &so));
  for (size_t i = 0; i < request.files.size(); ++i) {
    RETURN_IF_ERROR(check_sandbox_path(request.files[i].path, "files[" + std::to_string(i) + "].path"));
  }
  if (so.security) RETURN_IF_ERROR(security::check_libraries(*so.security, request.libraries));
  ASSIGN_OR_RETURN(std::vector<std::string> libs, resolve_libraries(options_.library_dir, request.libraries));

  State::Admission admission(state_.get());
  if (so.security) {
    // Refused code needs no sandbox: answer before making one (the session would scan too).
    security::ScanReport report = security::scan(*so.security, request.language, request.code);
    if (!report.allowed) {
      ExecResult refused;
      refused.stage = "scan";
      refused.set_status(ExecStatus::kPolicyViolation, report.summary());
      admission.record(refused);
      return refused;
    }
  }
  RETURN_IF_ERROR(admission.admit(options_.max_concurrent));
  auto opened = Session::open(*executor_, std::move(so));
  if (!opened.ok()) {
    admission.record(opened.status());
    return opened.status();
  }
  std::unique_ptr<Session> session = std::move(opened).value();
  StatusOr<ExecResult> result = Status(ErrorCode::kInternal, "not run");
  Status put = request.files.empty() ? Status::Ok() : session->put_files(request.files);
  if (!put.ok()) {
    result = put;
  } else {
    RunOptions ro;
    ro.libraries = std::move(libs);
    ro.stdin_data = request.stdin_data;
    ro.on_stdout = request.on_stdout;
    ro.on_stderr = request.on_stderr;
    result = session->run(request.code, ro);
  }
  Status closed = session->close();
  admission.record(result);
  if (result.ok() && !closed.ok() && result->status() == ExecStatus::kOk) {
    // The run finished but the sandbox could not be torn down: say so rather than hide it.
    return closed;
  }
  return result;
}

StatusOr<std::string> Service::open_session(const SessionRequest& request) {
  RETURN_IF_ERROR(check_language(request.language));
  SessionOptions so;
  so.language = request.language;
  so.source = options_.source;
  RETURN_IF_ERROR(limits_to_options(request.limits, options_, &so));
  so.interactive = request.interactive;  // Session::open names the field if the language has no driver
  if (request.idle_ttl_ms && (*request.idle_ttl_ms == 0 || *request.idle_ttl_ms > options_.session_max_age_ms)) {
    return InvalidArgument("idle_ttl_ms", "must be from 1 to " + std::to_string(options_.session_max_age_ms));
  }
  so.idle_ttl_ms = request.idle_ttl_ms.value_or(options_.session_idle_ttl_ms);
  so.max_age_ms = options_.session_max_age_ms;
  {
    // Expired sessions do not count against the cap.
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->stopping) return Status(ErrorCode::kUnsupported, "the service is shutting down", "service");
    for (auto it = state_->sessions.begin(); it != state_->sessions.end();) {
      it = it->second.session->is_open() ? std::next(it) : state_->sessions.erase(it);
    }
    if (state_->sessions.size() >= options_.max_sessions) {
      return Status(ErrorCode::kResourceExhausted,
                    std::to_string(options_.max_sessions) + " sessions are open; close one first", "max_sessions");
    }
  }
  ASSIGN_OR_RETURN(std::string id, random_id());
  auto s = Session::open(*executor_, std::move(so));
  if (!s.ok()) return s.status();
  State::Entry e;
  e.session = std::shared_ptr<Session>(std::move(s).value());
  e.language = e.session->language();
  e.interactive = request.interactive;
  e.opened = Clock::now();
  std::shared_ptr<Session> refused;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    // Re-checked: another open may have raced us to the cap, or shutdown begun.
    if (state_->stopping || state_->sessions.size() >= options_.max_sessions) {
      refused = e.session;
    } else {
      state_->sessions.emplace(id, std::move(e));
    }
  }
  if (refused) {
    refused->close();
    return Status(ErrorCode::kResourceExhausted,
                  std::to_string(options_.max_sessions) + " sessions are open; close one first", "max_sessions");
  }
  return id;
}

StatusOr<std::shared_ptr<Session>> Service::session(const std::string& id) {
  std::shared_ptr<Session> expired;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->sessions.find(id);
    if (it != state_->sessions.end()) {
      if (it->second.session->is_open()) return it->second.session;
      expired = std::move(it->second.session);
      state_->sessions.erase(it);
    }
  }
  std::string why;
  if (expired) why = expired->expired_reason();
  return Status(ErrorCode::kNotFound,
                "no session '" + id.substr(0, 64) + "'" + (why.empty() ? "" : " (it expired: " + why + ")"),
                "session_id");
}

Status Service::close_session(const std::string& id) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->sessions.find(id);
    if (it == state_->sessions.end()) {
      return Status(ErrorCode::kNotFound, "no session '" + id.substr(0, 64) + "'", "session_id");
    }
    s = std::move(it->second.session);
    state_->sessions.erase(it);
  }
  return s->close();  // waits for a run in progress to finish
}

std::vector<SessionInfo> Service::sessions() const {
  std::vector<SessionInfo> out;
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [id, e] : state_->sessions) {
    if (!e.session->is_open()) continue;
    out.push_back({id, e.language, e.interactive, ms_since(e.opened), e.runs->load()});
  }
  return out;
}

template <typename Fn>
StatusOr<ExecResult> Service::State::run_in(Service& svc, const std::string& id, const RunOptions& options, Fn fn) {
  State* st = svc.state_.get();
  const uint64_t max_timeout_ms = svc.options_.max_timeout_ms;
  if (options.timeout_ms && (*options.timeout_ms == 0 || *options.timeout_ms > max_timeout_ms)) {
    return InvalidArgument("timeout_ms", "must be from 1 to " + std::to_string(max_timeout_ms));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Session> s, svc.session(id));
  std::shared_ptr<std::atomic<uint64_t>> runs;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    auto it = st->sessions.find(id);
    if (it != st->sessions.end()) runs = it->second.runs;
  }
  Admission admission(st);
  RETURN_IF_ERROR(admission.admit(svc.options().max_concurrent));
  StatusOr<ExecResult> r = fn(*s);
  if (runs) ++*runs;
  admission.record(r);
  if (!r.ok() && r.status().code() == ErrorCode::kNotFound && r.status().field() == "session") {
    // Expired while we waited: report it the way session() does.
    return Status(ErrorCode::kNotFound, "no session '" + id + "' (" + r.status().message() + ")", "session_id");
  }
  return r;
}

StatusOr<ExecResult> Service::run(const std::string& id, const std::string& code, const RunOptions& options) {
  RunOptions o = options;
  ASSIGN_OR_RETURN(o.libraries, resolve_libraries(options_.library_dir, options.libraries));
  return State::run_in(*this, id, o, [&](Session& s) { return s.run(code, o); });
}

StatusOr<ExecResult> Service::command(const std::string& id, const std::string& command, const RunOptions& options) {
  if (!options.libraries.empty()) return InvalidArgument("libraries", "commands do not install libraries");
  return State::run_in(*this, id, options, [&](Session& s) { return s.execute_command(command, options); });
}

StatusOr<ExecResult> Service::install(const std::string& id, const std::vector<std::string>& libraries) {
  if (libraries.empty()) return InvalidArgument("libraries", "must name at least one library");
  ASSIGN_OR_RETURN(std::vector<std::string> paths, resolve_libraries(options_.library_dir, libraries));
  return State::run_in(*this, id, RunOptions{}, [&](Session& s) { return s.install(paths); });
}

nlohmann::json Service::languages() const {
  std::lock_guard<std::mutex> lock(state_->languages_mu);
  if (state_->languages) return *state_->languages;
  // Versions come from running each one's version command in a sandbox, once.
  nlohmann::json out = nlohmann::json::array();
  for (const lang::LanguageHandler* h : lang::all_languages()) {
    const bool available = access(h->binary(), X_OK) == 0 || options_.backend.name != "native";
    std::string version;
    if (available) {
      ExecRequest req;
      req.argv = h->version_argv();
      req.wall_ms = 20'000;
      Policy p;
      h->adjust_limits(p.limits);
      auto r = executor_->run_once(SandboxSpec{p}, req);
      if (r.ok() && r->status() == ExecStatus::kOk) {
        std::string text = r->stdout_data.empty() ? r->stderr_data : r->stdout_data;
        version = text.substr(0, text.find('\n'));
      }
    }
    const std::string file = h->source_file("");
    out.push_back({{"name", h->name()},
                   {"aliases", h->aliases()},
                   {"version", version},
                   {"available", available && !version.empty()},
                   {"compiled", h->compile_argv(file, Limits{}).has_value()},
                   {"file", file}});
  }
  state_->languages = out;
  return out;
}

size_t Service::running() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->running;
}

std::map<std::string, uint64_t> Service::executions_by_status() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->by_status;
}

void Service::shutdown() {
  std::map<std::string, State::Entry> sessions;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
    sessions.swap(state_->sessions);
  }
  // Closing waits for a run in a session to finish (its wall limit bounds the wait) and
  // destroys the sandbox.
  for (auto& [id, e] : sessions) e.session->close();
  sessions.clear();
  // One-shot executions close their own sandboxes; wait for them.
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->idle.wait(lock, [&] { return state_->running == 0; });
}

}  // namespace corral
