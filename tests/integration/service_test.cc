// Service on the native backend: one-shot executions with files, session registry (ids,
// expiry, caps), admission control, bad input naming the field, shutdown leaving nothing.
#include "src/session/service.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

class ServiceTest : public SandboxTest {
 protected:
  std::unique_ptr<Service> make(ServiceOptions o = {}) {
    auto s = Service::create(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
};

TEST_F(ServiceTest, ExecuteWithFilesAndStdin) {
  auto svc = make();
  ASSERT_TRUE(svc);
  ExecuteRequest req;
  req.language = "python";
  req.code = "import sys\nprint(open('data/in.txt').read().strip(), sys.stdin.read())";
  req.files = {{"data/in.txt", "from a file\n", 0644}};
  req.stdin_data = "and stdin";
  std::string streamed;
  req.on_stdout = [&](std::string_view s) { streamed += s; };
  auto r = svc->execute(req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kOk) << r->stderr_data;
  EXPECT_EQ(r->stdout_data, "from a file and stdin\n");
  EXPECT_EQ(streamed, r->stdout_data);
  EXPECT_EQ(svc->executions_by_status()["ok"], 1u);
  EXPECT_EQ(svc->running(), 0u);
  EXPECT_TRUE(children_of(getpid()).empty());
}

TEST_F(ServiceTest, BadInputNamesTheField) {
  auto svc = make();
  ASSERT_TRUE(svc);
  ExecuteRequest req;
  req.language = "cobol";
  auto r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.status().field(), "language");

  req.language = "python";
  req.files = {{"ok.txt", "x", 0644}, {"../../etc/passwd", "x", 0644}};
  r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "files[1].path");

  req.files.clear();
  req.limits.timeout_ms = 24ull * 3600 * 1000;
  r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "timeout_ms");

  req.limits = {};
  req.limits.security_preset = "no-such-preset";
  r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "security_preset");

  req.limits = {};
  req.libraries = {"numpy"};
  r = svc->execute(req);  // no library_dir configured
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "libraries");
}

TEST_F(ServiceTest, LibrariesResolveInLibraryDirOnly) {
  char tmpl[] = "/tmp/corral-libdir-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  chmod(dir.c_str(), 0755);
  fs::create_directories(dir + "/greet_pkg");
  std::ofstream(dir + "/greet_pkg/greet_pkg.py") << "def hello():\n    return 'hello from a local library'\n";
  std::ofstream(dir + "/greet_pkg/setup.py")
      << "from setuptools import setup\nsetup(name='greet_pkg', version='1.0', py_modules=['greet_pkg'])\n";
  ServiceOptions o;
  o.library_dir = dir;
  auto svc = make(o);
  ASSERT_TRUE(svc);
  ExecuteRequest req;
  req.language = "python";
  req.code = "print(1)";
  req.libraries = {"../etc"};
  auto r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "libraries[0]");
  req.libraries = {"greet_pkg", "missing"};
  r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(r.status().field(), "libraries[1]");
  fs::remove_all(dir);
}

TEST_F(ServiceTest, SecurityPresetRefusesBeforeRunning) {
  auto svc = make();
  ASSERT_TRUE(svc);
  ExecuteRequest req;
  req.language = "python";
  req.code = "import subprocess\nsubprocess.run(['id'])";
  req.limits.security_preset = "strict";
  auto r = svc->execute(req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status(), ExecStatus::kPolicyViolation);
  EXPECT_TRUE(children_of(getpid()).empty());
}

TEST_F(ServiceTest, SessionsKeepStateAndCloseCleanly) {
  auto svc = make();
  ASSERT_TRUE(svc);
  SessionRequest sr;
  sr.language = "python";
  auto id = svc->open_session(sr);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(id->size(), 32u);
  EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
  auto other = svc->open_session(sr);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*id, *other);

  auto a = svc->run(*id, "open('kept.txt', 'w').write('state')");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  auto b = svc->command(*id, "cat kept.txt");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->stdout_data, "state");
  auto s = svc->session(*id);
  ASSERT_TRUE(s.ok());
  auto files = (*s)->get_files({"kept.txt"}, 1024);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->front().data, "state");
  auto list = svc->sessions();
  ASSERT_EQ(list.size(), 2u);
  for (const auto& info : list) {
    if (info.id == *id) {
      EXPECT_EQ(info.runs, 2u);
    }
  }
  EXPECT_TRUE(svc->close_session(*id).ok());
  auto gone = svc->run(*id, "print(1)");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(gone.status().field(), "session_id");
  EXPECT_EQ(svc->close_session(*id).code(), ErrorCode::kNotFound);
  s = Status(ErrorCode::kInternal, "released");
  svc->shutdown();
  EXPECT_TRUE(svc->sessions().empty());
  EXPECT_TRUE(children_of(getpid()).empty());
  EXPECT_FALSE(svc->open_session(sr).ok());
}

TEST_F(ServiceTest, ExpiredSessionIsRemovedAndNotFound) {
  auto svc = make();
  ASSERT_TRUE(svc);
  SessionRequest sr;
  sr.language = "bash";
  sr.idle_ttl_ms = 200;
  auto id = svc->open_session(sr);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  auto s = svc->session(*id);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(s.status().message().find("idle TTL"), std::string::npos) << s.status().message();
  EXPECT_TRUE(svc->sessions().empty());
  EXPECT_TRUE(children_of(getpid()).empty());
}

TEST_F(ServiceTest, SessionCapAndAdmissionControl) {
  ServiceOptions o;
  o.max_sessions = 1;
  o.max_concurrent = 1;
  auto svc = make(o);
  ASSERT_TRUE(svc);
  SessionRequest sr;
  sr.language = "bash";
  auto id = svc->open_session(sr);
  ASSERT_TRUE(id.ok());
  auto second = svc->open_session(sr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kResourceExhausted);

  std::thread slow([&] { (void)svc->command(*id, "sleep 1"); });
  for (int i = 0; i < 200 && svc->running() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ExecuteRequest req;
  req.language = "bash";
  req.code = "echo hi";
  auto r = svc->execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  slow.join();
  r = svc->execute(req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "hi\n");
}

TEST_F(ServiceTest, InteractiveIsRefusedOrHonoured) {
  auto svc = make();
  ASSERT_TRUE(svc);
  SessionRequest sr;
  sr.language = "python";
  sr.interactive = true;
  auto id = svc->open_session(sr);
  if (!id.ok()) {
    EXPECT_EQ(id.status().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(id.status().field(), "interactive");
    return;
  }
  auto a = svc->run(*id, "x = 41");
  ASSERT_TRUE(a.ok());
  auto b = svc->run(*id, "print(x + 1)");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->stdout_data, "42\n");
}

TEST_F(ServiceTest, LanguagesListsEveryHandler) {
  auto svc = make();
  ASSERT_TRUE(svc);
  nlohmann::json langs = svc->languages();
  ASSERT_TRUE(langs.is_array());
  bool python = false;
  for (const auto& l : langs) {
    ASSERT_TRUE(l.contains("name") && l.contains("version") && l.contains("available") && l.contains("compiled") &&
                l.contains("file"));
    if (l["name"] == "python") {
      python = true;
      EXPECT_TRUE(l["available"].get<bool>());
      EXPECT_FALSE(l["compiled"].get<bool>());
    }
  }
  EXPECT_TRUE(python);
}

}  // namespace
}  // namespace corral::testing
