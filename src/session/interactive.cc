#include "src/session/interactive.h"

#include <nlohmann/json.hpp>

namespace corral {
namespace {

constexpr char kCodeFile[] = "/sandbox/.corral/driver/cell-code";
constexpr char kResultFile[] = "/sandbox/.corral/driver/cell-result.json";
constexpr uint64_t kStartWallMs = 30'000;
// The relay's own budget beyond the run's timeout and grace: its start, the driver's hello.
constexpr uint64_t kRelayOverheadMs = 10'000;

nlohmann::json parse_outcome(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nullptr;
}

// Run after the relay in its own exec where the backend can (StepRequest::after): the result
// file on the first line (the relays write it as one line of JSON), then the artifact listing.
std::string after_relay(bool artifacts) {
  std::string c = std::string("cat ") + kResultFile + " 2>/dev/null; echo";
  if (artifacts) c += "; " + lang::artifact_listing_command();
  return c;
}

// What the relay reported, or a null json when it reported nothing: from the after command's
// output when it ran with the relay, else read from the sandbox. `listing` gets the rest.
nlohmann::json read_outcome(Executor& ex, Sandbox& sb, const StepResult& step, std::optional<std::string>* listing) {
  if (step.after_stdout) {
    const std::string& out = *step.after_stdout;
    const size_t nl = out.find('\n');
    *listing = nl == std::string::npos ? std::string() : out.substr(nl + 1);
    return parse_outcome(out.substr(0, nl));
  }
  listing->reset();
  auto files = ex.get_files(sb, {kResultFile}, 64ull << 20);
  if (!files.ok() || files->empty()) return nullptr;
  return parse_outcome((*files)[0].data);
}

std::string outcome_string(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void append(std::string* message, const std::string& more) {
  if (!more.empty()) *message += (message->empty() ? "" : "; ") + more;
}

}  // namespace

InteractiveRunner::InteractiveRunner(const lang::LanguageHandler& lang, lang::InteractiveDriver driver)
    : lang_(lang), driver_(std::move(driver)) {}

StatusOr<ExecResult> InteractiveRunner::start(Executor& ex, Sandbox& sb) {
  std::vector<FileEntry> files = lang_.support_files();
  files.insert(files.end(), driver_.files.begin(), driver_.files.end());
  RETURN_IF_ERROR(ex.put_files(sb, files));
  ExecRequest req;
  req.argv = driver_.driver_argv;
  req.wall_ms = kStartWallMs;
  auto r = ex.exec_detached(sb, req);
  if (!r.ok()) return r;
  r->stage = "driver";
  // A driver that exited is an ordinary exec's result; one still running has exit_code -1.
  if (r->status() == ExecStatus::kOk && r->exit_code == -1) {
    running_ = true;
  } else {
    ExecResult failed;
    failed.stage = "driver";
    failed.exit_code = r->exit_code;
    failed.signal = r->signal;
    failed.stdout_data = r->stdout_data;
    failed.stderr_data = r->stderr_data;
    failed.usage = r->usage;
    failed.set_status(r->status() == ExecStatus::kOk ? ExecStatus::kSetupError : r->status(),
                      std::string("the ") + lang_.name() + " interactive driver did not start" +
                          (r->message.empty() ? "" : ": " + r->message));
    return failed;
  }
  return r;
}

StatusOr<ExecResult> InteractiveRunner::restart(Executor& ex, Sandbox& sb, std::string* note) {
  auto s = start(ex, sb);
  if (s.ok() && s->status() == ExecStatus::kOk) {
    append(note, "the interpreter had stopped (" + (lost_.empty() ? std::string("it exited") : lost_) +
                     "); this run started a fresh one, so earlier state is gone");
    lost_.clear();
  }
  return s;
}

StatusOr<StepResult> InteractiveRunner::relay(Executor& ex, Sandbox& sb, std::vector<FileEntry> files,
                                              const std::string& after, const std::string& stdin_data,
                                              const std::function<void(std::string_view)>& on_stdout,
                                              const std::function<void(std::string_view)>& on_stderr,
                                              uint64_t timeout_ms) {
  StepRequest step;
  step.files = std::move(files);
  step.after = after;
  ExecRequest& req = step.exec;
  req.argv = driver_.relay_argv;
  for (const std::string& a : {std::string(kCodeFile), std::string(kResultFile), std::to_string(timeout_ms),
                               std::to_string(kInterruptGraceMs)}) {
    req.argv.push_back(a);
  }
  req.stdin_data = stdin_data;
  req.on_stdout = on_stdout;
  req.on_stderr = on_stderr;
  req.wall_ms = timeout_ms + kInterruptGraceMs + kRelayOverheadMs;
  return ex.exec_step(sb, step);
}

StatusOr<ExecResult> InteractiveRunner::run(Executor& ex, Sandbox& sb, const std::string& code,
                                            const std::string& stdin_data,
                                            const std::function<void(std::string_view)>& on_stdout,
                                            const std::function<void(std::string_view)>& on_stderr,
                                            uint64_t timeout_ms, const lang::ArtifactOptions* artifacts) {
  // The code goes with the relay's exec, and the result and artifact listing come back with it.
  std::vector<FileEntry> files = {{kCodeFile, code, 0644}, {lang::kRunMarker, "", 0644}};
  if (artifacts) files.push_back({std::string(lang::kOutDir) + "/.corral", "", 0644});  // so the directory exists
  const std::string after = after_relay(artifacts != nullptr);
  std::string note;
  if (!running_) {
    auto s = restart(ex, sb, &note);
    if (!s.ok() || s->status() != ExecStatus::kOk) return s;
  }
  auto step = relay(ex, sb, std::move(files), after, stdin_data, on_stdout, on_stderr, timeout_ms);
  if (!step.ok()) return step.status();
  std::optional<std::string> listing;
  nlohmann::json outcome = read_outcome(ex, sb, *step, &listing);
  std::string status = outcome.is_object() ? outcome_string(outcome, "status") : "";
  if (status == "no_driver" && step->result.stdout_data.empty() && step->result.stderr_data.empty()) {
    // Gone since the last run (killed from outside, or stuck and killed by the relay just
    // now): nothing of this run has happened yet, so start a fresh one and run there.
    lost_ = "it was no longer answering";
    auto s = restart(ex, sb, &note);
    if (!s.ok() || s->status() != ExecStatus::kOk) return s;
    step = relay(ex, sb, {}, after, stdin_data, on_stdout, on_stderr, timeout_ms);
    if (!step.ok()) return step.status();
    outcome = read_outcome(ex, sb, *step, &listing);
    status = outcome.is_object() ? outcome_string(outcome, "status") : "";
  }
  ExecResult* r = &step->result;

  ExecResult out;
  out.stage = "run";
  out.stdout_data = std::move(r->stdout_data);
  out.stderr_data = std::move(r->stderr_data);
  out.stdout_truncated = r->stdout_truncated;
  out.stderr_truncated = r->stderr_truncated;
  out.usage = r->usage;
  // The exec's own verdict comes first (output cap, seccomp, OOM, its wall-clock backstop):
  // the relay was ended by corral, and the driver released the run's pipes and stopped it.
  if (r->status() != ExecStatus::kOk) out.set_status(r->status(), r->message), out.signal = r->signal;
  const std::string timeout_text = "wall clock limit of " + std::to_string(timeout_ms) + " ms reached";
  const std::string lost_text = "the session's state is lost and the next run starts a fresh interpreter";
  if (status == "ok") {
    out.exit_code = 0;
    out.set_status(ExecStatus::kOk);
    if (auto it = outcome.find("value"); it != outcome.end() && it->is_string()) out.value = it->get<std::string>();
  } else if (status == "error") {
    out.exit_code = 1;
    out.set_status(ExecStatus::kNonzeroExit, outcome_string(outcome, "error"));
  } else if (status == "exit") {
    auto it = outcome.find("exit_code");
    out.exit_code = it != outcome.end() && it->is_number_integer() ? it->get<int>() : 1;
    out.set_status(out.exit_code == 0 ? ExecStatus::kOk : ExecStatus::kNonzeroExit);
  } else if (status == "timeout") {
    out.set_status(ExecStatus::kTimeout, timeout_text + ": the run was interrupted (" +
                                             outcome_string(outcome, "error") +
                                             "); the interpreter and its state were kept");
  } else if (status == "killed") {
    running_ = false;
    lost_ = "killed when a run did not stop after its timeout";
    out.set_status(ExecStatus::kTimeout, timeout_text + ": the run did not stop within " +
                                             std::to_string(kInterruptGraceMs) +
                                             " ms of the interrupt, so the interpreter was killed; " + lost_text);
  } else if (status == "died") {
    running_ = false;
    lost_ = "it exited during a run";
    out.set_status(ExecStatus::kNonzeroExit, "the interpreter exited during the run; " + lost_text);
  } else if (status == "no_driver") {
    running_ = false;
    out.set_status(ExecStatus::kInternalError, "the interactive driver is not running: " + outcome_string(outcome, "error"));
  } else {
    out.set_status(ExecStatus::kInternalError, "the interactive relay reported nothing");
  }
  // An earlier status (a seccomp kill, say) keeps its message; the loss is said as well.
  if (!running_ && out.message.find(lost_text) == std::string::npos) append(&out.message, lost_text);
  append(&out.message, note);
  if (artifacts) {
    if (listing) {
      out.artifacts = lang::read_listed_artifacts(ex, sb, *listing, *artifacts);
    } else if (auto collected = lang::collect_artifacts(ex, sb, *artifacts); collected.ok()) {
      out.artifacts = std::move(collected).value();
    }
  }
  return out;
}

}  // namespace corral
