// Shared helpers for tests that run real sandboxes (root required).
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/native_executor.h"
#include "src/lang/runner.h"

namespace corral::testing {

// "Key:\tvalue" of /proc/PID/status: the value with its leading blanks stripped, "" if
// the key (or the process) is absent.
inline std::string proc_status_field(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      auto v = line.substr(key.size() + 1);
      auto start = v.find_first_not_of(" \t");
      return start == std::string::npos ? "" : v.substr(start);
    }
  }
  return "";
}

// Host pids whose parent is `parent` (a sandbox's corral-init is a child of the test).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string path = "/proc/";
    path += e->d_name;
    std::ifstream stat(path + "/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(e->d_name)));
  }
  closedir(d);
  return out;
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the native backend writes id maps";
  }

  static Policy policy(const std::string& json = "{}") {
    auto p = Policy::from_json_text(json);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? *p : Policy{};
  }

  // One-shot run; fails the test on a Status error.
  ExecResult run(const std::vector<std::string>& argv, const Policy& p = Policy{}, std::string stdin_data = {}) {
    ExecRequest req;
    req.argv = argv;
    req.stdin_data = std::move(stdin_data);
    auto r = executor_.run_once(SandboxSpec{p}, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  // Code through corral run's path (lang::run_code); fails the test on a Status error.
  ExecResult run_lang(const lang::RunRequest& req) {
    auto r = lang::run_code(executor_, req);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : ExecResult{};
  }

  ExecResult sh(const std::string& script, const Policy& p = Policy{}) { return run({"/bin/sh", "-c", script}, p); }
  ExecResult py(const std::string& code, const Policy& p = Policy{}) { return run({"/usr/bin/python3", "-c", code}, p); }

  runtime::NativeExecutor executor_;
};

// A SandboxTest with a fresh host directory, made from `pattern` (mkdtemp's XXXXXX at its
// end) with `mode` before each test and removed after it.
class SandboxTestWithDir : public SandboxTest {
 protected:
  explicit SandboxTestWithDir(std::string pattern, mode_t mode = 0700) : pattern_(std::move(pattern)), mode_(mode) {}
  void SetUp() override {
    SandboxTest::SetUp();
    if (IsSkipped()) return;
    std::string made = pattern_;
    ASSERT_NE(mkdtemp(made.data()), nullptr) << pattern_;
    dir_ = made;
    ASSERT_EQ(chmod(dir_.c_str(), mode_), 0) << dir_;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;

 private:
  std::string pattern_;
  mode_t mode_;
};

}  // namespace corral::testing
