// The contract suites' fixture: one executor per backend (native, docker, podman) made
// through the registry, as sessions, pools and servers make them. A backend that cannot run
// here skips with the reason (not root; engine not reachable: run `tools/engines start`).
// The container backends use CORRAL_TEST_IMAGE (default corral-test:latest, built by
// tools/engines: busybox + python3 + bash, no registry needed).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backends/docker/docker_executor.h"
#include "backends/registry.h"

namespace corral {

inline std::string test_image() {
  const char* v = getenv("CORRAL_TEST_IMAGE");
  return v && *v ? v : "corral-test:latest";
}

inline std::string read_host_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Contract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& backend = GetParam();
    if (geteuid() != 0) GTEST_SKIP() << backend << ": needs root (native writes id maps; engines' sockets are root's)";
    auto ex = make_executor({backend, backend == "native" ? "" : test_image(), ""});
    if (!ex.ok()) GTEST_SKIP() << backend << " not reachable: " << ex.status().to_string() << " (tools/engines start)";
    executor_ = std::move(ex).value();
    if (auto* d = engine()) {
      auto has = d->image_exists(test_image());
      if (!has.ok() || !*has) GTEST_SKIP() << backend << ": no image " << test_image() << " (tools/engines start)";
    }
  }

  docker::DockerExecutor* engine() { return dynamic_cast<docker::DockerExecutor*>(executor_.get()); }
  bool container() const { return GetParam() != "native"; }

  static Policy policy(const std::string& json = "{}") {
    auto p = Policy::from_json_text(json);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? *p : Policy{};
  }

  std::unique_ptr<Sandbox> make(const Policy& p = Policy{}) {
    auto sb = executor_->create(SandboxSpec{p});
    EXPECT_TRUE(sb.ok()) << sb.status().to_string();
    return sb.ok() ? std::move(sb).value() : nullptr;
  }

  ExecResult exec(Sandbox& sb, std::vector<std::string> argv, std::string stdin_data = {},
                  std::optional<uint64_t> wall_ms = {}) {
    ExecRequest req;
    req.argv = std::move(argv);
    req.stdin_data = std::move(stdin_data);
    req.wall_ms = wall_ms;
    auto r = executor_->exec(sb, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  ExecResult run(std::vector<std::string> argv, const Policy& p = Policy{}, std::string stdin_data = {}) {
    ExecRequest req;
    req.argv = std::move(argv);
    req.stdin_data = std::move(stdin_data);
    auto r = executor_->run_once(SandboxSpec{p}, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  ExecResult python(const std::string& code, const Policy& p = Policy{}) {
    return run({"/usr/bin/python3", "-c", code}, p);
  }

  std::unique_ptr<Executor> executor_;
};

}  // namespace corral
