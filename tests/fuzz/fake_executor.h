// An in-memory Executor for driving the HTTP API without sandboxes: files live in a map, a
// program "runs" by echoing its source file (or its shell command line), so tests can see
// their input come back. Code containing FAKE_TIMEOUT times out, FAKE_FAIL exits 1.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "src/core/executor.h"

namespace corral::testing {

class FakeExecutor : public Executor {
 public:
  class FakeSandbox : public Sandbox {
   public:
    FakeSandbox(std::string id, Policy p) : id_(std::move(id)), policy_(std::move(p)) {}
    const std::string& id() const override { return id_; }
    const Policy& policy() const override { return policy_; }
    std::map<std::string, std::string> files;

   private:
    std::string id_;
    Policy policy_;
  };

  StatusOr<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec) override {
    ++live;
    return std::unique_ptr<Sandbox>(new FakeSandbox("fake-" + std::to_string(++created), spec.policy));
  }

  static std::string absolute(const std::string& p) { return p.empty() || p[0] != '/' ? "/sandbox/" + p : p; }

  StatusOr<ExecResult> exec(Sandbox& sb, const ExecRequest& req) override {
    auto& fs = static_cast<FakeSandbox&>(sb);
    ExecResult r;
    std::string out;
    if (req.argv.size() == 3 && req.argv[0] == "/bin/sh" && req.argv[1] == "-c") {
      if (req.argv[2].find("run-start") == std::string::npos) out = req.argv[2];
    } else if (!req.argv.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = fs.files.find(absolute(req.argv.back()));
      if (it != fs.files.end()) out = it->second;
    }
    if (out.find("FAKE_TIMEOUT") != std::string::npos) {
      r.set_status(ExecStatus::kTimeout, "wall clock limit");
      return r;
    }
    if (req.on_stdout && !out.empty()) req.on_stdout(out);
    r.stdout_data = out + req.stdin_data;
    r.exit_code = out.find("FAKE_FAIL") != std::string::npos ? 1 : 0;
    r.set_status(r.exit_code ? ExecStatus::kNonzeroExit : ExecStatus::kOk);
    return r;
  }

  Status put_files(Sandbox& sb, const std::vector<FileEntry>& files) override {
    auto& fs = static_cast<FakeSandbox&>(sb);
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& f : files) {
      if (f.path.find("..") != std::string::npos) return InvalidArgument(f.path, "escapes the sandbox");
      fs.files[absolute(f.path)] = f.data;
    }
    return Status::Ok();
  }

  StatusOr<std::vector<FileEntry>> get_files(Sandbox& sb, const std::vector<std::string>& paths,
                                             uint64_t max_bytes) override {
    auto& fs = static_cast<FakeSandbox&>(sb);
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<FileEntry> out;
    for (const auto& p : paths) {
      auto it = fs.files.find(absolute(p));
      if (it == fs.files.end()) return Status(ErrorCode::kNotFound, "no such file", p);
      if (it->second.size() > max_bytes) return Status(ErrorCode::kResourceExhausted, "file is too large", p);
      out.push_back({p, it->second, 0644});
    }
    return out;
  }

  Status destroy(Sandbox&) override {
    --live;
    return Status::Ok();
  }
  Features features() const override { return {"fake"}; }

  std::atomic<int> live{0};
  std::atomic<int> created{0};

 private:
  std::mutex mu_;
};

}  // namespace corral::testing
