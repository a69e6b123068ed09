// Sessions on the native backend: state across runs, commands, library installs, files in
// and out (with the attacks on each direction), timeouts, streaming, TTL and max age.
#include <dirent.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "src/session/session.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

int children_of_this_process() { return static_cast<int>(children_of(getpid()).size()); }

class Sessions : public SandboxTestWithDir {
 protected:
  Sessions() : SandboxTestWithDir("/tmp/corral-session-XXXXXX", 0755) {}
  std::unique_ptr<Session> open(SessionOptions o = {}) {
    auto s = Session::open(executor_, std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
};

TEST_F(Sessions, FilesPersistAcrossRunsAndCommands) {
  auto s = open();
  ASSERT_TRUE(s);
  auto a = s->run("open('notes.txt', 'w').write('kept')");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->status(), ExecStatus::kOk) << a->stderr_data;
  auto b = s->run("print(open('notes.txt').read())");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->stdout_data, "kept\n");
  auto c = s->execute_command("cat notes.txt; echo; pwd");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->stdout_data, "kept\n/sandbox\n");
  // A compiled language in a session: the compile happens per run.
  SessionOptions cpp;
  cpp.language = "cpp";
  auto t = open(cpp);
  ASSERT_TRUE(t);
  auto r = t->run("#include <cstdio>\nint main() { puts(\"compiled in a session\"); }");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data, "compiled in a session\n");
}

TEST_F(Sessions, InstallFromALocalPackage) {
  SessionOptions o;
  o.language = "javascript";
  auto s = open(o);
  ASSERT_TRUE(s);
  fs::create_directories(dir_ + "/pkg/package");
  std::ofstream(dir_ + "/pkg/package/package.json") << R"({"name": "greet", "version": "1.0.0", "main": "index.js"})";
  std::ofstream(dir_ + "/pkg/package/index.js") << "module.exports = () => 'hi from a session library';\n";
  ASSERT_EQ(system(("tar -czf " + dir_ + "/greet-1.0.0.tgz -C " + dir_ + "/pkg package").c_str()), 0);
  RunOptions with_lib;
  with_lib.libraries = {dir_ + "/greet-1.0.0.tgz"};
  auto r = s->run("console.log(require('greet')())", with_lib);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kOk) << r->stage << r->stderr_data;
  EXPECT_EQ(r->stdout_data, "hi from a session library\n");
  // Still installed for the next run.
  auto again = s->run("console.log(require('greet')().length)");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stdout_data, "25\n");
  EXPECT_FALSE(s->install({"left-pad"}).ok()) << "a name cannot be installed: there is no network";
}

TEST_F(Sessions, CopyInAndOut) {
  auto s = open();
  ASSERT_TRUE(s);
  fs::create_directories(dir_ + "/in/sub");
  std::ofstream(dir_ + "/in/a.txt") << "alpha";
  std::ofstream(dir_ + "/in/sub/b.txt") << "beta";
  fs::create_symlink("/etc/shadow", dir_ + "/in/shadow-link");  // must not be followed on the host
  ASSERT_TRUE(s->copy_to_runtime(dir_ + "/in", "data").ok());
  auto r = s->execute_command("cat data/a.txt data/sub/b.txt; ls data");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data, "alphabetaa.txt\nsub\n");  // the host symlink was not copied
  EXPECT_EQ(r->stdout_data.find("shadow-link"), std::string::npos);

  ASSERT_TRUE(s->execute_command("echo result > out.txt; ln -s /etc/shadow evil; mkfifo pipe").ok());
  ASSERT_TRUE(s->copy_from_runtime("out.txt", dir_ + "/out.txt").ok());
  std::ifstream out(dir_ + "/out.txt");
  std::string got;
  std::getline(out, got);
  EXPECT_EQ(got, "result");
  // Sandbox-side attacks: a symlink to a host file, a FIFO.
  EXPECT_FALSE(s->copy_from_runtime("evil", dir_ + "/evil.txt").ok());
  EXPECT_FALSE(s->copy_from_runtime("pipe", dir_ + "/pipe.txt").ok());
  EXPECT_FALSE(fs::exists(dir_ + "/evil.txt"));
  // Host-side attack: the destination is a symlink planted to redirect the write.
  fs::create_symlink(dir_ + "/victim", dir_ + "/planted");
  std::ofstream(dir_ + "/victim") << "untouched";
  EXPECT_FALSE(s->copy_from_runtime("out.txt", dir_ + "/planted").ok());
  std::ifstream victim(dir_ + "/victim");
  std::getline(victim, got);
  EXPECT_EQ(got, "untouched");
  // Copy-in cannot leave the sandbox.
  EXPECT_FALSE(s->put_files({{"../../../tmp/escaped", "x", 0644}}).ok());
  EXPECT_FALSE(fs::exists("/tmp/escaped"));
}

TEST_F(Sessions, TimeoutsDefaultAndPerCall) {
  SessionOptions o;
  o.default_timeout_ms = 400;
  auto s = open(o);
  ASSERT_TRUE(s);
  auto slow = s->run("import time; time.sleep(5)");
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(slow->status(), ExecStatus::kTimeout);
  RunOptions longer;
  longer.timeout_ms = 5000;
  auto ok = s->run("import time; time.sleep(0.6); print('done')", longer);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->stdout_data, "done\n");
  // The session survives a timeout.
  auto after = s->execute_command("echo alive");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->stdout_data, "alive\n");
}

TEST_F(Sessions, StreamingDeliversOutputAsProduced) {
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<std::string> chunks;
  RunOptions o;
  o.on_stdout = [&](std::string_view c) { chunks.emplace_back(c); };
  auto r = s->run("import time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.1)", o);
  ASSERT_TRUE(r.ok());
  EXPECT_GE(chunks.size(), 2u);
  std::string joined;
  for (auto& c : chunks) joined += c;
  EXPECT_EQ(joined, "0\n1\n2\n");
}

TEST_F(Sessions, IdleTtlClosesAndFreesTheSandbox) {
  const int before = children_of_this_process();
  SessionOptions o;
  o.idle_ttl_ms = 300;
  auto s = open(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(children_of_this_process(), before + 1);  // corral-init
  // Use keeps it alive past the TTL.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ASSERT_TRUE(s->execute_command("true").ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(s->is_open());
  EXPECT_NE(s->expired_reason().find("idle TTL of 300 ms"), std::string::npos) << s->expired_reason();
  auto r = s->run("print(1)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(children_of_this_process(), before) << "the sandbox outlived its session";
}

TEST_F(Sessions, MaxAgeClosesEvenWhenBusy) {
  SessionOptions o;
  o.max_age_ms = 500;
  auto s = open(o);
  ASSERT_TRUE(s);
  for (int i = 0; i < 10 && s->is_open(); ++i) {
    s->execute_command("true");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(s->is_open());
  EXPECT_NE(s->expired_reason().find("maximum age"), std::string::npos);
}

TEST_F(Sessions, SecurityPolicyRefusesBeforeAnythingRuns) {
  SessionOptions o;
  auto strict = security::SecurityPolicy::preset("strict");
  ASSERT_TRUE(strict.ok()) << strict.status().to_string();
  o.security = *strict;
  auto s = open(o);
  ASSERT_TRUE(s);
  // Would leave a marker file if it ran.
  auto r = s->run("import subprocess\nopen('/sandbox/ran', 'w').write('1')\nsubprocess.run(['true'])");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kPolicyViolation);
  EXPECT_EQ(r->stage, "scan");
  EXPECT_NE(r->message.find("subprocess"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("line 1"), std::string::npos) << r->message;
  // Allowed code runs; the refused run left nothing behind.
  auto ok = s->run("print(6 * 7)");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status(), ExecStatus::kOk) << ok->message;
  EXPECT_EQ(ok->stdout_data, "42\n");
  auto files = s->get_files({"/sandbox/ran"}, 16);
  EXPECT_FALSE(files.ok()) << "the refused code ran";
  // Commands are scanned as shell.
  auto cmd = s->execute_command("rm -rf /");
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->status(), ExecStatus::kPolicyViolation);
  // Library installs are checked against the policy.
  EXPECT_FALSE(s->install({"/tmp/anything.whl"}).ok());
}

TEST_F(Sessions, BadInputIsAnError) {
  SessionOptions o;
  o.language = "klingon";
  auto s = Session::open(executor_, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().field(), "language");
  auto ok = open();
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->close().ok());
  EXPECT_FALSE(ok->execute_command("true").ok());
  EXPECT_TRUE(ok->close().ok()) << "closing twice is harmless";
}

}  // namespace
}  // namespace corral::testing
