// The red-team fixture shared by redteam_test.cc (probes run inside one sandbox) and
// redteam_files_test.cc (copy in/out, several sandboxes, many requests): a NativeExecutor,
// sandboxes whose policy bind-mounts the probe directory read-only at /probes, and the
// assertions that read the probes' "SAFE/UNSAFE rowNN ..." lines.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/native_executor.h"
#include "src/core/policy.h"
#include "tests/redteam/redteam_support.h"

namespace corral {
// gtest prints enum values as bytes otherwise.
inline void PrintTo(ExecStatus s, std::ostream* os) { *os << exec_status_name(s); }
}  // namespace corral

namespace corral::redteam {

using json = nlohmann::json;

inline constexpr uid_t kHostIdBase = 1u << 30;  // runtime/userns.h: every sandbox id maps above this
inline constexpr uint64_t kMiB = 1ull << 20;

inline std::string random_hex(size_t n) {
  std::random_device rd;
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "0123456789abcdef"[rd() % 16];
  return s;
}

inline bool has(const ExecResult& r, const std::string& s) { return r.stdout_data.find(s) != std::string::npos; }

// The probe ran to its end (at least `min_safe` SAFE lines), reported nothing unsafe, and
// the exec ended with `want`.
inline void ExpectAllSafe(const ExecResult& r, int min_safe, ExecStatus want = ExecStatus::kOk) {
  ProbeReport p = parse_probe(r.stdout_data);
  std::string unsafe;
  for (const auto& u : p.unsafe) unsafe += "  " + u + "\n";
  EXPECT_TRUE(p.unsafe.empty()) << "the probe found a weakness:\n" << unsafe << describe(r);
  EXPECT_GE(p.safe, min_safe) << "the probe did not finish its checks\n" << describe(r);
  EXPECT_EQ(r.status(), want) << describe(r);
}

// Memory rows are safe in one of two ways: the probe finished with every check SAFE (rlimits:
// the allocation failed with ENOMEM), or the sandbox was killed as out of memory (cgroup
// memory.max) before the probe could hold more than the limit - it prints UNSAFE the moment
// it does, so an oom exit must come with no UNSAFE line.
inline void ExpectSafeOrOom(const ExecResult& r, int min_safe) {
  if (r.status() != ExecStatus::kOom) return ExpectAllSafe(r, min_safe);
  ProbeReport p = parse_probe(r.stdout_data);
  EXPECT_TRUE(p.unsafe.empty()) << "held more than the limit before the oom kill\n" << describe(r);
}

// CORRAL_REDTEAM_ZYGOTE=1: every sandbox the fixture makes is forked from a python zygote
// (runtime/zygote.h, started once per process), so the same probes check that path.
// CORRAL_REDTEAM_ZYGOTE=light: the same with nothing preloaded (the cgroup v2 VM, where
// importing pandas under software emulation would take minutes).
// Both keep a spare in the template (ZygoteOptions::spare, the default); =nospare: as 1 without.
inline bool zygote_mode() {
  const char* v = getenv("CORRAL_REDTEAM_ZYGOTE");
  return v && (std::string(v) == "1" || std::string(v) == "light" || std::string(v) == "nospare");
}
inline runtime::ZygoteOptions redteam_zygote_options() {
  runtime::ZygoteOptions o;
  const char* v = getenv("CORRAL_REDTEAM_ZYGOTE");
  if (v && std::string(v) == "light") o.preload = {}, o.warmup = "";
  if (v && std::string(v) == "nospare") o.spare = false;
  return o;
}

// The template's children that belong to a sandbox: a spare (its clone made ahead, waiting
// for a request) has no ids mapped yet; corral maps every sandbox's as it makes it.
inline std::vector<pid_t> sandbox_children_of_template(pid_t tpl) {
  std::vector<pid_t> out;
  for (pid_t p : children_of(tpl)) {
    std::ifstream map("/proc/" + std::to_string(p) + "/uid_map");
    std::string line;
    if (!map || std::getline(map, line)) out.push_back(p);  // gone already, or mapped
  }
  return out;
}

// One executor per process (sandboxes are independent; a zygote takes seconds to start).
inline runtime::NativeExecutor& shared_executor() {
  static runtime::NativeExecutor* ex = [] {
    auto* e = new runtime::NativeExecutor();
    if (zygote_mode()) {
      Status s = e->start_zygote(redteam_zygote_options());
      if (!s.ok()) fprintf(stderr, "redteam: the zygote did not start: %s\n", s.to_string().c_str());
    }
    return e;
  }();
  return *ex;
}

class Redteam : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "red-team probes run in native sandboxes, which need root";
    dir_ = probe_dir();
    ASSERT_EQ(access((dir_ + "/row01_host_files").c_str(), X_OK), 0)
        << "probes not found in " << dir_ << " (build them, or set CORRAL_PROBE_DIR)";
  }

  // The probes' bind mount plus `extra` (its "mounts" are appended, other keys replace).
  StatusOr<Policy> MakePolicy(const json& extra) const {
    json j = {{"mounts", json::array({{{"type", "bind"}, {"source", dir_}, {"target", "/probes"}, {"readonly", true}}})}};
    for (const auto& [k, v] : extra.items()) {
      if (k == "mounts") {
        for (const auto& m : v) j["mounts"].push_back(m);
      } else {
        j[k] = v;
      }
    }
    return Policy::from_json(j);
  }

  // Processes sandboxes of this fixture leave behind: its children, and in zygote mode the
  // template's children (the template itself lives as long as the executor).
  std::vector<pid_t> sandbox_processes() {
    std::vector<pid_t> out = children_of(getpid());
    auto info = ex_.zygote_info();
    if (info.contains("python")) {
      pid_t tpl = info["python"]["pid"].get<pid_t>();
      out.erase(std::remove(out.begin(), out.end(), tpl), out.end());
      for (pid_t p : sandbox_children_of_template(tpl)) out.push_back(p);
    }
    return out;
  }

  // Sandboxes of this run's kind: forked from the zygote in zygote mode, cold otherwise.
  static SandboxSpec Spec(const Policy& p) { return SandboxSpec{p, zygote_mode() ? "python" : ""}; }

  // Creates a sandbox; *init_pid gets its corral-init's host pid (a new child of this process).
  std::unique_ptr<Sandbox> Create(const json& extra = json::object(), pid_t* init_pid = nullptr) {
    auto policy = MakePolicy(extra);
    if (!policy.ok()) {
      ADD_FAILURE() << "policy: " << policy.status().to_string();
      return nullptr;
    }
    // A zygote sandbox's init is the template's child, not this process's.
    pid_t parent = getpid();
    if (zygote_mode()) {
      auto info = ex_.zygote_info();
      if (info.contains("python")) parent = info["python"]["pid"].get<pid_t>();
    }
    const bool from_template = parent != getpid();
    auto kids = [&] { return from_template ? sandbox_children_of_template(parent) : children_of(parent); };
    std::vector<pid_t> before = kids();
    auto sb = ex_.create(Spec(*policy));
    if (!sb.ok()) {
      ADD_FAILURE() << "create: " << sb.status().to_string();
      return nullptr;
    }
    if (zygote_mode() && !runtime::NativeExecutor::from_zygote(**sb)) {
      ADD_FAILURE() << "CORRAL_REDTEAM_ZYGOTE=1 but the sandbox was made cold";
    }
    if (init_pid) {
      *init_pid = 0;
      for (pid_t p : kids()) {
        if (std::find(before.begin(), before.end(), p) == before.end()) *init_pid = p;
      }
    }
    return std::move(sb).value();
  }

  ExecResult Exec(Sandbox& sb, std::vector<std::string> argv, const std::function<void(ExecRequest&)>& tweak = {}) {
    ExecRequest req;
    req.argv = std::move(argv);
    req.wall_ms = 60'000;
    if (tweak) tweak(req);
    auto r = ex_.exec(sb, req);
    if (!r.ok()) {
      ADD_FAILURE() << "exec " << req.argv[0] << ": " << r.status().to_string();
      ExecResult e;
      e.set_status(ExecStatus::kInternalError, r.status().to_string());
      return e;
    }
    return std::move(r).value();
  }

  // create + run /probes/<probe> args... + destroy.
  ExecResult RunProbe(const std::string& probe, std::vector<std::string> args = {}, const json& extra = json::object()) {
    auto sb = Create(extra);
    if (!sb) {
      ExecResult e;
      e.set_status(ExecStatus::kInternalError, "sandbox creation failed");
      return e;
    }
    args.insert(args.begin(), "/probes/" + probe);
    ExecResult r = Exec(*sb, args);
    ex_.destroy(*sb);
    return r;
  }

  void ExpectStillWorks(Sandbox& sb) {
    ExecResult r = Exec(sb, {"/bin/true"});
    EXPECT_EQ(r.status(), ExecStatus::kOk) << "the sandbox no longer runs programs: " << describe(r);
  }

  std::string dir_;
  runtime::NativeExecutor& ex_ = shared_executor();
};

}  // namespace corral::redteam
