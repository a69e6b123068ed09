#include "src/lang/runner.h"

#include "src/lang/artifacts.h"

#include <sys/stat.h>

#include <algorithm>

namespace corral::lang {
namespace {

std::string basename_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p.substr(p.rfind('/') + 1);
}

// One step's request. Steps other than "run" keep their output out of the caller's stream.
ExecRequest step_request(std::vector<std::string> argv, uint64_t wall_ms, const RunRequest* streamed) {
  ExecRequest req;
  req.argv = std::move(argv);
  req.wall_ms = wall_ms;
  if (streamed) {
    req.stdin_data = streamed->stdin_data;
    req.on_stdout = streamed->on_stdout;
    req.on_stderr = streamed->on_stderr;
  }
  return req;
}

StatusOr<ExecResult> step(Executor& ex, Sandbox& sb, const char* stage, std::vector<std::string> argv,
                          uint64_t wall_ms, const RunRequest* streamed) {
  auto r = ex.exec(sb, step_request(std::move(argv), wall_ms, streamed));
  if (r.ok()) r->stage = stage;
  return r;
}

}  // namespace

StatusOr<Policy> policy_for(const LanguageHandler& lang, const RunRequest& request, std::vector<LibrarySource>* libs) {
  Policy p = request.policy;
  p.language = lang.name();
  lang.adjust_limits(p.limits);
  if (p.seccomp == "default") p.seccomp = lang.seccomp_profile();
  for (const auto& [k, v] : lang.env(p.limits)) {
    if (!p.env.count(k)) p.env[k] = v;
  }
  for (size_t i = 0; i < request.libraries.size(); ++i) {
    const std::string& spec = request.libraries[i];
    const std::string field = "libraries[" + std::to_string(i) + "]";
    if (spec.empty() || spec[0] != '/') {
      return InvalidArgument(field, "'" + spec + "': installing by name needs the package registry, and sandboxes "
                                    "have no network; give an absolute path to a local package (wheel or source "
                                    "dir, npm tarball, .gem, R source tarball, Go module dir)");
    }
    struct stat st;
    if (stat(spec.c_str(), &st) != 0) return Status(ErrorCode::kNotFound, "no such file or directory", field + ": " + spec);
    LibrarySource src;
    src.spec = spec;
    src.sandbox_path = std::string(kLibSourceDir) + "/" + std::to_string(i) + "/" + basename_of(spec);
    MountSpec m;
    m.type = MountSpec::Type::kBind;
    m.source = spec;
    m.target = src.sandbox_path;
    m.readonly = true;
    p.mounts.push_back(m);
    libs->push_back(src);
  }
  return p;
}

StatusOr<ExecResult> run_code(Executor& ex, const RunRequest& request) { return run_code(ex, request, nullptr); }

StatusOr<ExecResult> run_code(Executor& ex, const RunRequest& request, std::unique_ptr<Sandbox>* keep) {
  const LanguageHandler* lang = find_language(request.language);
  if (!lang) {
    return InvalidArgument("language", "unknown language '" + request.language + "'; one of: " + language_names());
  }
  std::vector<LibrarySource> libs;
  auto policy = policy_for(*lang, request, &libs);
  if (!policy.ok()) return policy.status();
  std::optional<std::vector<std::string>> install;
  if (!libs.empty()) {
    auto argv = lang->install_argv(libs);
    if (!argv.ok()) return argv.status();
    install = std::move(argv).value();
  }

  auto sb = ex.create(SandboxSpec{*policy, lang->name()});  // from its zygote if one runs
  if (!sb.ok()) return sb.status();
  struct Destroy {
    Executor& ex;
    std::unique_ptr<Sandbox>& sb;
    std::unique_ptr<Sandbox>* keep;
    ~Destroy() {
      if (keep) *keep = std::move(sb);
      else ex.destroy(*sb);
    }
  } destroy{ex, *sb, keep};

  if (install) {
    auto r = install_in(ex, **sb, *install, policy->limits);
    if (!r.ok() || r->status() != ExecStatus::kOk) return r;
  }
  return compile_and_run(ex, **sb, *lang, request.code, policy->limits, request.stdin_data, request.on_stdout,
                         request.on_stderr, policy->limits.wall_ms,
                         request.collect_artifacts ? &request.artifact_options : nullptr);
}

StatusOr<ExecResult> install_in(Executor& ex, Sandbox& sb, const std::vector<std::string>& argv, const Limits& limits) {
  return step(ex, sb, "install", argv, std::max<uint64_t>(limits.wall_ms, 120'000), nullptr);
}

StatusOr<ExecResult> compile_and_run(Executor& ex, Sandbox& sb, const LanguageHandler& lang, const std::string& code,
                                     const Limits& limits, const std::string& stdin_data,
                                     const std::function<void(std::string_view)>& on_stdout,
                                     const std::function<void(std::string_view)>& on_stderr, uint64_t wall_ms,
                                     const ArtifactOptions* artifacts) {
  const std::string file = lang.source_file(code);
  // The files go with the first exec (the compile, else the run), the artifact listing with
  // the run: one call each (container backends make it one exec instead of three).
  StepRequest first;
  first.files = lang.support_files();
  first.files.push_back({file, code, 0644});
  first.files.push_back({kRunMarker, "", 0644});
  if (artifacts) first.files.push_back({std::string(kOutDir) + "/.corral", "", 0644});  // so the directory exists
  if (auto compile = lang.compile_argv(file, limits)) {
    first.exec = step_request(*compile, lang.compile_wall_ms(), nullptr);
    ASSIGN_OR_RETURN(StepResult c, ex.exec_step(sb, first));
    c.result.stage = "compile";
    if (c.result.status() != ExecStatus::kOk) {
      if (c.result.status() == ExecStatus::kNonzeroExit) c.result.message = "compilation failed";
      return c.result;
    }
    first.files.clear();
  }
  RunRequest streamed;
  streamed.stdin_data = stdin_data;
  streamed.on_stdout = on_stdout;
  streamed.on_stderr = on_stderr;
  StepRequest run{std::move(first.files), step_request(lang.run_argv(file, limits), wall_ms, &streamed),
                  artifacts ? artifact_listing_command() : std::string()};
  ASSIGN_OR_RETURN(StepResult r, ex.exec_step(sb, run));
  r.result.stage = "run";
  if (artifacts) {
    if (r.after_stdout) {
      r.result.artifacts = read_listed_artifacts(ex, sb, *r.after_stdout, *artifacts);
    } else if (auto collected = collect_artifacts(ex, sb, *artifacts); collected.ok()) {
      r.result.artifacts = std::move(collected).value();
    }
  }
  return r.result;
}

}  // namespace corral::lang
