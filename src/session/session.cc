#include "src/session/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/lang/runner.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;

// Reads a host file without following a symlink at its last component.
StatusOr<std::string> read_host_file(const std::string& path, mode_t* mode) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return SysError("open host file", path);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status(ErrorCode::kInvalidArgument, "is not a regular file", path);
  }
  *mode = st.st_mode & 0777;
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = read(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fd);
  data.resize(off);
  return data;
}

// host_path (file or directory tree) -> entries below sandbox_path; symlinks are skipped.
Status collect(const std::string& host_path, const std::string& sandbox_path, std::vector<FileEntry>* out, int depth) {
  if (depth > 64) return InvalidArgument(host_path, "directory tree is too deep");
  struct stat st;
  if (lstat(host_path.c_str(), &st) != 0) return SysError("stat host path", host_path);
  if (S_ISLNK(st.st_mode)) return Status::Ok();
  if (S_ISREG(st.st_mode)) {
    mode_t mode = 0644;
    auto data = read_host_file(host_path, &mode);
    if (!data.ok()) return data.status();
    out->push_back({sandbox_path, std::move(data).value(), mode});
    return Status::Ok();
  }
  if (!S_ISDIR(st.st_mode)) return Status::Ok();  // devices, FIFOs, sockets are not copied
  DIR* d = opendir(host_path.c_str());
  if (!d) return SysError("open host directory", host_path);
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
  }
  closedir(d);
  for (const auto& n : names) RETURN_IF_ERROR(collect(host_path + "/" + n, sandbox_path + "/" + n, out, depth + 1));
  return Status::Ok();
}

}  // namespace

Session::Session(Executor& ex, SessionOptions options, const lang::LanguageHandler& lang)
    : ex_(ex), options_(std::move(options)), lang_(&lang) {}

StatusOr<std::unique_ptr<Session>> Session::open(Executor& executor, SessionOptions options) {
  const lang::LanguageHandler* lang = lang::find_language(options.language);
  if (!lang) {
    return InvalidArgument("language", "unknown language '" + options.language + "'; one of: " + lang::language_names());
  }
  lang::RunRequest shape;
  shape.language = options.language;
  shape.policy = options.policy;
  std::vector<lang::LibrarySource> none;
  auto policy = lang::policy_for(*lang, shape, &none);
  if (!policy.ok()) return policy.status();
  std::optional<lang::InteractiveDriver> driver;
  if (options.interactive) {
    driver = lang->interactive_driver();
    if (!driver) {
      std::string with;
      for (const auto* l : lang::all_languages()) {
        if (l->interactive_driver()) with += (with.empty() ? "" : ", ") + std::string(l->name());
      }
      return InvalidArgument("interactive", std::string("language '") + lang->name() +
                                                "' has no interactive driver; interactive sessions support: " + with);
    }
  }
  std::unique_ptr<Session> s(new Session(executor, std::move(options), *lang));
  s->policy_ = std::move(policy).value();
  // Forked from the language's zygote where the backend runs one (the same sandbox, with
  // the interpreter's imports already done); made cold otherwise.
  const SandboxSpec spec{s->policy_, lang->name()};
  auto sb = s->options_.source ? s->options_.source->acquire(spec) : executor.create(spec);
  if (!sb.ok()) return sb.status();
  s->sandbox_ = std::move(sb).value();
  if (driver) {
    s->interactive_ = std::make_unique<InteractiveRunner>(*lang, std::move(*driver));
    auto started = s->interactive_->start(executor, *s->sandbox_);
    Status failed = started.status();
    if (started.ok() && started->status() != ExecStatus::kOk) {
      failed = Status(ErrorCode::kInternal, started->message + (started->stderr_data.empty() ? "" : ": " + started->stderr_data),
                      "interactive");
    }
    if (!failed.ok()) {
      std::lock_guard<std::mutex> lock(s->mu_);
      s->close_locked("the interactive driver did not start");
      return failed;
    }
  }
  s->opened_ = s->last_used_ = Clock::now();
  if (s->options_.idle_ttl_ms || s->options_.max_age_ms) s->watchdog_ = std::thread([p = s.get()] { p->watchdog(); });
  return s;
}

Session::~Session() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    close_locked("closed");
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

// Sleeps until the earlier of the idle and age deadlines, then closes the session if it is
// still due (a call in between moves the idle deadline).
void Session::watchdog() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_ && sandbox_) {
    auto deadline = Clock::time_point::max();
    if (options_.idle_ttl_ms) deadline = last_used_ + std::chrono::milliseconds(options_.idle_ttl_ms);
    if (options_.max_age_ms) deadline = std::min(deadline, opened_ + std::chrono::milliseconds(options_.max_age_ms));
    if (wake_.wait_until(lock, deadline) == std::cv_status::timeout || Clock::now() >= deadline) {
      auto now = Clock::now();
      if (options_.max_age_ms && now >= opened_ + std::chrono::milliseconds(options_.max_age_ms)) {
        close_locked("maximum age of " + std::to_string(options_.max_age_ms) + " ms passed");
      } else if (options_.idle_ttl_ms && now >= last_used_ + std::chrono::milliseconds(options_.idle_ttl_ms)) {
        close_locked("idle TTL of " + std::to_string(options_.idle_ttl_ms) + " ms passed");
      }
    }
  }
}

Status Session::close_locked(std::string reason) {
  if (!sandbox_) return Status::Ok();
  Status s = options_.source ? options_.source->release(std::move(sandbox_)) : ex_.destroy(*sandbox_);
  sandbox_.reset();
  closed_reason_ = std::move(reason);
  return s;
}

Status Session::close() {
  Status s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = close_locked("closed");
  }
  wake_.notify_all();
  return s;
}

bool Session::is_open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sandbox_ != nullptr;
}

std::string Session::expired_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_reason_ == "closed" ? std::string() : closed_reason_;
}

Status Session::usable_locked() const {
  if (sandbox_) return Status::Ok();
  return Status(ErrorCode::kNotFound, "the session is closed (" + closed_reason_ + ")", "session");
}

void Session::touch_locked() {
  last_used_ = Clock::now();
  wake_.notify_all();
}

uint64_t Session::timeout_for(const RunOptions& o) const {
  if (o.timeout_ms) return *o.timeout_ms;
  return options_.default_timeout_ms ? options_.default_timeout_ms : policy_.limits.wall_ms;
}

// A refusal before anything ran: the scan report is the result.
std::optional<ExecResult> Session::refuse_if_violating(const std::string& language, const std::string& code) const {
  if (!options_.security) return std::nullopt;
  security::ScanReport report = security::scan(*options_.security, language, code);
  if (report.allowed) return std::nullopt;
  ExecResult r;
  r.stage = "scan";
  r.set_status(ExecStatus::kPolicyViolation, report.summary());
  return r;
}

StatusOr<ExecResult> Session::run(const std::string& code, const RunOptions& options) {
  if (auto refused = refuse_if_violating(lang_->name(), code)) return *refused;
  if (!options.libraries.empty()) {
    auto installed = install(options.libraries);
    if (!installed.ok() || installed->status() != ExecStatus::kOk) return installed;
  }
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(usable_locked());
  touch_locked();
  const lang::ArtifactOptions* artifacts = options_.capture_artifacts ? &options_.artifacts : nullptr;
  auto r = interactive_ ? interactive_->run(ex_, *sandbox_, code, options.stdin_data, options.on_stdout,
                                            options.on_stderr, timeout_for(options), artifacts)
                        : lang::compile_and_run(ex_, *sandbox_, *lang_, code, policy_.limits, options.stdin_data,
                                                options.on_stdout, options.on_stderr, timeout_for(options), artifacts);
  touch_locked();
  return r;
}

StatusOr<ExecResult> Session::execute_command(const std::string& command, const RunOptions& options) {
  if (auto refused = refuse_if_violating("bash", command)) return *refused;
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(usable_locked());
  touch_locked();
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", command};
  req.stdin_data = options.stdin_data;
  req.wall_ms = timeout_for(options);
  req.on_stdout = options.on_stdout;
  req.on_stderr = options.on_stderr;
  auto r = ex_.exec(*sandbox_, req);
  touch_locked();
  return r;
}

StatusOr<ExecResult> Session::install(const std::vector<std::string>& libraries) {
  if (options_.security) RETURN_IF_ERROR(security::check_libraries(*options_.security, libraries));
  std::vector<lang::LibrarySource> libs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(usable_locked());
    for (size_t i = 0; i < libraries.size(); ++i) {
      const std::string& spec = libraries[i];
      if (spec.empty() || spec[0] != '/') {
        return InvalidArgument("libraries[" + std::to_string(i) + "]",
                               "'" + spec + "': sandboxes have no network; give an absolute path to a local package");
      }
      std::string base = spec.substr(spec.find_last_of('/') + 1);
      libs.push_back({spec, std::string(lang::kWorkdir) + "/.corral-libsrc/" + std::to_string(lib_counter_++) + "/" + base});
    }
  }
  auto argv = lang_->install_argv(libs);
  if (!argv.ok()) return argv.status();
  for (const auto& l : libs) RETURN_IF_ERROR(copy_to_runtime(l.spec, l.sandbox_path));
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(usable_locked());
  touch_locked();
  auto r = lang::install_in(ex_, *sandbox_, *argv, policy_.limits);
  touch_locked();
  return r;
}

Status Session::put_files(const std::vector<FileEntry>& files) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(usable_locked());
  touch_locked();
  return ex_.put_files(*sandbox_, files);
}

StatusOr<std::vector<FileEntry>> Session::get_files(const std::vector<std::string>& paths, uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(usable_locked());
  touch_locked();
  return ex_.get_files(*sandbox_, paths, max_bytes);
}

Status Session::copy_to_runtime(const std::string& host_path, const std::string& sandbox_path) {
  std::vector<FileEntry> files;
  RETURN_IF_ERROR(collect(host_path, sandbox_path, &files, 0));
  if (files.empty()) return InvalidArgument(host_path, "nothing to copy (no regular files)");
  return put_files(files);
}

Status Session::copy_from_runtime(const std::string& sandbox_path, const std::string& host_path, uint64_t max_bytes) {
  auto files = get_files({sandbox_path}, max_bytes);
  if (!files.ok()) return files.status();
  const FileEntry& f = files->front();
  // O_NOFOLLOW: a symlink planted at the destination is refused, not written through.
  int fd = ::open(host_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, f.mode & 0777);
  if (fd < 0) return SysError("create host file", host_path);
  size_t off = 0;
  while (off < f.data.size()) {
    ssize_t w = write(fd, f.data.data() + off, f.data.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      ::close(fd);
      return SysError("write host file", e, host_path);
    }
    off += static_cast<size_t>(w);
  }
  if (::close(fd) != 0) return SysError("close host file", host_path);
  return Status::Ok();
}

}  // namespace corral
