// corral run: code in a language, in a fresh sandbox (native, or --backend docker|podman). corral languages: which
// languages this host can run, checked by running each one's version command in a sandbox.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/registry.h"
#include "runtime/native_executor.h"
#include "src/cli/commands.h"
#include "src/cli/output.h"
#include "src/lang/runner.h"
#include "src/security/security_policy.h"

namespace po = boost::program_options;

namespace corral::cli {

int run_command(const std::vector<std::string>& args) {
  po::options_description desc("usage: corral run --lang LANG (-c CODE | FILE | -) [options]");
  desc.add_options()("help", "show this help")("lang,l", po::value<std::string>(), "language (see `corral languages`)")(
      "code,c", po::value<std::string>(), "the code to run")(
      "lib", po::value<std::vector<std::string>>()->composing(), "local library to install first (repeatable)")(
      "timeout", po::value<std::string>(), "wall-clock limit of the run in ms")(
      "memory", po::value<std::string>(), "memory limit, e.g. 256M")(
      "policy", po::value<std::string>(), "policy JSON file")(
      "json", po::bool_switch(), "print the ExecResult as JSON (with artifacts, base64)")(
      "artifacts", po::value<std::string>(), "write figures and /sandbox/out files to this directory")(
      "security-policy", po::value<std::string>(), "scan the code first (preset or JSON file); refuse violations")(
      "backend", po::value<std::string>()->default_value("native"), "native | docker | podman")(
      "image", po::value<std::string>(), "container backends: the image to run in (or CORRAL_IMAGE)")(
      "file", po::value<std::string>(), "source file, or -");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (auto stop = parse_options("run", args, desc, pos, &vm)) return *stop;
  if (!vm.count("lang")) return usage_error("run: --lang is required (one of: " + lang::language_names() + ")");
  lang::RunRequest req;
  req.language = vm["lang"].as<std::string>();
  if (!lang::find_language(req.language)) {
    return usage_error("run: unknown language '" + req.language + "' (one of: " + lang::language_names() + ")");
  }
  const bool has_code = vm.count("code"), has_file = vm.count("file");
  if (has_code == has_file) return usage_error("run: give the code exactly once: -c CODE, a FILE, or - for stdin");
  bool code_from_stdin = false;
  if (has_code) {
    req.code = vm["code"].as<std::string>();
  } else if (vm["file"].as<std::string>() == "-") {
    if (!read_all_stdin(&req.code)) return usage_error("run: cannot read the code from stdin");
    code_from_stdin = true;
  } else {
    const std::string path = vm["file"].as<std::string>();
    std::ifstream in(path);
    if (!in) return usage_error("run: cannot read " + path + ": " + strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    req.code = ss.str();
  }
  if (vm.count("policy")) {
    auto p = Policy::from_file(vm["policy"].as<std::string>());
    if (!p.ok()) return usage_error("policy: " + p.status().to_string());
    req.policy = std::move(p).value();
  }
  if (vm.count("timeout")) {
    const std::string t = vm["timeout"].as<std::string>();
    uint64_t ms = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
    if (ec != std::errc() || end != t.data() + t.size() || ms == 0 || ms > 86'400'000) {
      return usage_error("--timeout: must be a whole number of milliseconds from 1 to 86400000, got '" + t + "'");
    }
    req.policy.limits.wall_ms = ms;
  }
  if (vm.count("memory")) {
    auto bytes = parse_size(vm["memory"].as<std::string>());
    if (!bytes || *bytes < (4u << 20)) return usage_error("--memory: a size of at least 4M, e.g. 256M or 1G");
    req.policy.limits.memory_bytes = *bytes;
  }
  if (vm.count("lib")) req.libraries = vm["lib"].as<std::vector<std::string>>();
  if (!code_from_stdin && !isatty(0)) {
    if (!read_all_stdin(&req.stdin_data)) return usage_error("stdin: cannot read it, or it is over 64 MiB");
  }
  const bool json = vm["json"].as<bool>();
  std::string artifact_dir;
  if (vm.count("artifacts")) {
    artifact_dir = vm["artifacts"].as<std::string>();
    struct stat st;
    if (stat(artifact_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return usage_error("--artifacts: " + artifact_dir + " is not an existing directory");
    }
  }
  req.collect_artifacts = json || !artifact_dir.empty();
  if (!json) {
    req.on_stdout = [](std::string_view s) { write_all(1, s); };
    req.on_stderr = [](std::string_view s) { write_all(2, s); };
  }

  if (vm.count("security-policy")) {
    auto sp = security::SecurityPolicy::load(vm["security-policy"].as<std::string>());
    if (!sp.ok()) return usage_error("--security-policy: " + sp.status().to_string());
    Status libs = security::check_libraries(*sp, req.libraries);
    if (!libs.ok()) return usage_error(libs.to_string());
    security::ScanReport report = security::scan(*sp, req.language, req.code);
    if (!report.allowed) {
      // Refused before anything ran.
      ExecResult refused;
      refused.stage = "scan";
      refused.set_status(ExecStatus::kPolicyViolation, report.summary());
      if (json) {
        nlohmann::json j = refused.to_json();
        j["security_report"] = report.to_json();
        write_all(1, j.dump(2) + "\n");
      } else {
        write_all(2, report.to_text("<code>"));
      }
      return exit_code_for(refused);
    }
  }
  BackendOptions backend;
  backend.name = vm["backend"].as<std::string>();
  backend.short_lived = true;  // one sandbox, then exit
  backend.prepared_netns = prepared_netns_wanted();
  if (vm.count("image")) backend.image = vm["image"].as<std::string>();
  auto executor = make_executor(backend);
  if (!executor.ok()) return usage_error("--backend: " + executor.status().to_string());
  std::unique_ptr<Sandbox> sandbox;
  auto result = lang::run_code(**executor, req, &sandbox);
  if (!result.ok()) {
    if (sandbox) (*executor)->destroy(*sandbox);
    return usage_error(result.status().to_string());
  }
  for (const Artifact& a : result->artifacts) {
    if (artifact_dir.empty() || a.truncated) continue;
    // O_EXCL|O_NOFOLLOW: never overwrite or write through anything already there.
    const std::string path = artifact_dir + "/" + a.name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      fprintf(stderr, "corral: artifact %s not written: %s\n", path.c_str(), strerror(errno));
      continue;
    }
    write_all(fd, a.bytes);
    close(fd);
  }
  if (json) {
    write_all(1, result->to_json().dump(2) + "\n");
  } else if (result->stage != "run") {
    // Install and compile output was not streamed: show it, then say what failed.
    write_all(2, result->stdout_data);
    write_all(2, result->stderr_data);
    fprintf(stderr, "corral: %s failed (%s%s)\n", result->stage.c_str(), exec_status_name(result->status()),
            result->status() == ExecStatus::kNonzeroExit ? (", exit " + std::to_string(result->exit_code)).c_str()
                                                          : "");
  } else {
    report_outcome(*result);
  }
  const int code = exit_code_for(*result);
  if (sandbox) {
    // As in `corral exec`: a native sandbox is taken apart after corral has exited.
    if (backend.name == "native") {
      exit_then_teardown(code, [&] {
        (*executor)->destroy(*sandbox);
        executor->reset();  // the executor's own teardown: an emptied corral cgroup subtree goes too
      });
    }
    (*executor)->destroy(*sandbox);
  }
  return code;
}

int languages_command(const std::vector<std::string>& args) {
  bool json = false;
  for (const auto& a : args) {
    if (a == "--json") json = true;
    else if (a == "--help") return puts("usage: corral languages [--json]"), 0;
    else return usage_error("languages: unknown option '" + a + "'");
  }
  runtime::NativeExecutor executor;
  nlohmann::json out = nlohmann::json::array();
  if (!json) printf("%-11s %-9s %s\n", "LANGUAGE", "STATUS", "VERSION / REASON");
  for (const lang::LanguageHandler* h : lang::all_languages()) {
    std::string status = "ok", detail;
    if (access(h->binary(), X_OK) != 0) {
      status = "missing";
      detail = std::string(h->binary()) + " is not installed on this host";
    } else {
      ExecRequest req;
      req.argv = h->version_argv();
      req.wall_ms = 20'000;
      Policy p;
      h->adjust_limits(p.limits);
      auto r = executor.run_once(SandboxSpec{p}, req);
      if (!r.ok()) {
        status = "broken";
        detail = r.status().to_string();
      } else {
        std::string text = r->stdout_data.empty() ? r->stderr_data : r->stdout_data;
        detail = text.substr(0, text.find('\n'));
        if (r->status() != ExecStatus::kOk) status = "broken", detail = exec_status_name(r->status()) + (": " + detail);
      }
    }
    if (json) {
      out.push_back({{"name", h->name()}, {"aliases", h->aliases()}, {"status", status}, {"version", detail}});
    } else {
      printf("%-11s %-9s %s\n", h->name(), status.c_str(), detail.c_str());
    }
  }
  if (json) puts(out.dump(2).c_str());
  return 0;
}

}  // namespace corral::cli
