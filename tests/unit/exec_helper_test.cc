// The container backends' exec helper (backends/docker/exec_helper.h) and the filter that
// takes its control records out of stderr. The helper's step and detach modes run here under
// every shell this host has (dash, busybox, bash), in a temporary directory standing in for
// the workdir: files written beside planted symlinks never reach the links' targets. (The
// kill mode runs only inside containers, in the contract suite: kill(-1) here would reach
// every process of the user running the tests.)
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backends/docker/exec_helper.h"
#include "backends/docker/exec_stream.h"

extern char** environ;

namespace corral::docker {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

// Runs argv in `dir` with stdout and stderr to files (a detached program keeps only the
// helper's fifos, so waiting for the helper is enough).
Ran spawn(std::vector<std::string> argv, const std::string& dir) {
  const std::string out = dir + "/.stdout", err = dir + "/.stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  Ran r;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) == 0) {
    int st = 0;
    waitpid(pid, &st, 0);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  posix_spawn_file_actions_destroy(&fa);
  r.out = slurp(out);
  r.err = slurp(err);
  unlink(out.c_str());
  unlink(err.c_str());
  return r;
}

// ---- ControlFilter ----

std::string filtered(ControlFilter& f, const std::string& stream, size_t chunk) {
  std::string out;
  auto sink = [&](std::string_view d) { out.append(d); };
  for (size_t i = 0; i < stream.size(); i += chunk) f.feed(std::string_view(stream).substr(i, chunk), sink);
  f.finish(sink);
  return out;
}

TEST(ControlFilter, TakesRecordsOutWhereverTheStreamIsSplit) {
  const std::string m = "\x1e" "corral0123456789abcdef";
  const std::string stream = "before\n" + m + "Aline one\nline two\n" + m + "middle \x1e" "corr" + m + "D12 34 5" + m +
                             "after\x1e";
  for (size_t chunk : {1, 2, 3, 7, 23, 1000}) {
    ControlFilter f(m);
    EXPECT_EQ(filtered(f, stream, chunk), "before\nmiddle \x1e" "corrafter\x1e") << chunk;
    ASSERT_EQ(f.records().size(), 2u) << chunk;
    EXPECT_EQ(f.records()[0].type, 'A');
    EXPECT_EQ(f.records()[0].payload, "line one\nline two\n");
    ASSERT_NE(f.find('D'), nullptr);
    EXPECT_EQ(f.find('D')->payload, "12 34 5");
    EXPECT_EQ(f.find('E'), nullptr);
  }
}

TEST(ControlFilter, UnfinishedRecordIsDroppedAndNoMarkerPassesAll) {
  const std::string m = "\x1e" "corralffffffffffffffff";
  ControlFilter f(m);
  EXPECT_EQ(filtered(f, "out" + m + "Apartial listing", 4), "out");
  EXPECT_TRUE(f.records().empty());
  ControlFilter none;
  EXPECT_EQ(filtered(none, "a" + m + "Ab" + m, 5), "a" + m + "Ab" + m);
  EXPECT_TRUE(none.records().empty());
}

TEST(ControlFilter, StreamedBytesNeverIncludeARecord) {
  const std::string m = new_control_marker();
  ControlFilter f(m);
  std::vector<std::string> pieces;
  auto sink = [&](std::string_view d) { pieces.emplace_back(d); };
  f.feed("text " + m.substr(0, 5), sink);
  f.feed(m.substr(5) + "Asecret", sink);
  f.feed(m + " more", sink);
  f.finish(sink);
  std::string all;
  for (const auto& p : pieces) all += p;
  EXPECT_EQ(all, "text  more");
  for (const auto& p : pieces) EXPECT_EQ(p.find("secret"), std::string::npos);
}

TEST(ExecHelper, WhatTravelsInline) {
  EXPECT_TRUE(fits_inline({{"a.py", "print('héllo ✓')\n", 0644}, {"b", "", 0600}}));
  EXPECT_FALSE(fits_inline({{"a", std::string("x\0y", 3), 0644}}));
  EXPECT_FALSE(fits_inline({{"a", "\xff\xfe", 0644}}));
  EXPECT_FALSE(fits_inline({{"a", "\xc3", 0644}}));           // cut short
  EXPECT_FALSE(fits_inline({{"a", "\xed\xa0\x80", 0644}}));   // a surrogate
  EXPECT_FALSE(fits_inline({{"a", std::string(kInlineFileMax + 1, 'x'), 0644}}));
  std::vector<FileEntry> many(kInlineTotalMax / kInlineFileMax + 1, FileEntry{"f", std::string(kInlineFileMax, 'x')});
  EXPECT_FALSE(fits_inline(many));
  EXPECT_NE(new_control_marker(), new_control_marker());
}

TEST(ExecHelper, DetachedProgramParses) {
  auto d = DetachedProgram::parse("42 123456 40");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->pid, "42");
  EXPECT_EQ(d->starttime, "123456");
  EXPECT_EQ(d->sid, "40");
  for (const char* bad : {"", "42", "42 1", "42 1 2 3", "42 x 2", "-1 2 3", "1  2"}) {
    EXPECT_FALSE(DetachedProgram::parse(bad)) << bad;
  }
}

// ---- the helper under real shells ----

class HelperShell : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    shell_ = GetParam();
    if (shell_ == "busybox") {
      if (access("/usr/bin/busybox", X_OK) != 0 && access("/bin/busybox", X_OK) != 0) GTEST_SKIP() << "no busybox";
    } else if (access(shell_.c_str(), X_OK) != 0) {
      GTEST_SKIP() << "no " << shell_;
    }
    char tmpl[] = "/tmp/corral-helper-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    work_ = root_ + "/work";
    outside_ = root_ + "/outside";
    fs::create_directories(work_);
    fs::create_directories(outside_);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  // The helper's argv with this test's shell in place of /bin/sh.
  std::vector<std::string> with_shell(std::vector<std::string> argv) const {
    if (shell_ == "busybox") {
      argv[0] = "sh";
      argv.insert(argv.begin(), access("/usr/bin/busybox", X_OK) == 0 ? "/usr/bin/busybox" : "/bin/busybox");
    } else {
      argv[0] = shell_;
    }
    return argv;
  }

  std::string shell_, root_, work_, outside_;
};

TEST_P(HelperShell, StepWritesFilesRunsTheProgramAndReportsTheAfterCommand) {
  const std::string m = new_control_marker();
  std::vector<InlineFile> files = {{"main.py", "print('hi')\n", 0644},
                                   {"deep/er/data.txt", "x y\n'quoted' \"too\" $HOME `no`\n", 0600},
                                   {"run.sh", "#!/bin/sh\necho run\n", 0755},
                                   {"empty", "", 0644}};
  auto r = spawn(with_shell(step_argv(m, work_, files, "echo listed; ls " + work_ + "/deep/er",
                                      {"/bin/sh", "-c", "cat main.py; echo to-err >&2; exit 3"})),
                 work_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  ControlFilter f(m);
  EXPECT_EQ(filtered(f, r.err, 4096), "to-err\n");
  ASSERT_NE(f.find('A'), nullptr) << r.err;
  EXPECT_EQ(f.find('A')->payload, "listed\ndata.txt\n");
  ASSERT_NE(f.find('X'), nullptr) << r.err;
  auto exit = StepExit::parse(f.find('X')->payload);
  ASSERT_TRUE(exit) << f.find('X')->payload;
  EXPECT_EQ(exit->status, 3);
  EXPECT_EQ(r.out, "print('hi')\n");
  EXPECT_EQ(slurp(work_ + "/deep/er/data.txt"), files[1].data);
  EXPECT_EQ(fs::status(work_ + "/deep/er/data.txt").permissions(), fs::perms(0600));
  EXPECT_EQ(fs::status(work_ + "/run.sh").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(work_ + "/main.py").permissions(), fs::perms(0644));
  EXPECT_EQ(fs::status(work_ + "/deep").permissions(), fs::perms(0755));
  EXPECT_TRUE(fs::is_regular_file(work_ + "/empty"));
  // Without an after command: the exit status, no after record; a signal is 128+N, as the
  // engines report it.
  auto plain = spawn(with_shell(step_argv(m, work_, {{"x", "1", 0644}}, "", {"/bin/sh", "-c", "kill -TERM $$"})), work_);
  EXPECT_EQ(plain.exit_code, 128 + SIGTERM) << plain.err;
  ControlFilter g(m);
  EXPECT_EQ(filtered(g, plain.err, 4096), "");
  EXPECT_EQ(g.find('A'), nullptr);
  ASSERT_NE(g.find('X'), nullptr);
  EXPECT_EQ(StepExit::parse(g.find('X')->payload)->status, 128 + SIGTERM);
}

TEST(ExecHelper, StepExitParses) {
  auto e = StepExit::parse("137 1500000 20000 73400320");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 137);
  EXPECT_EQ(e->cpu_user_ns, std::optional<uint64_t>(1500000));
  EXPECT_EQ(e->cpu_sys_ns, std::optional<uint64_t>(20000));
  EXPECT_EQ(e->peak_memory_bytes, std::optional<uint64_t>(73400320));
  auto unknown = StepExit::parse("0 - - -");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 0);
  EXPECT_FALSE(unknown->cpu_user_ns || unknown->cpu_sys_ns || unknown->peak_memory_bytes);
  for (const char* bad : {"", "0", "256 - - -", "x - - -", "0 - - - -", "-1 - - -"}) EXPECT_FALSE(StepExit::parse(bad)) << bad;
}

TEST_P(HelperShell, StepNeverWritesThroughSymlinks) {
  const std::string m = new_control_marker();
  fs::create_symlink(outside_ + "/target.txt", work_ + "/link");         // dangling
  std::ofstream(outside_ + "/existing.txt") << "keep";
  fs::create_symlink(outside_ + "/existing.txt", work_ + "/link2");
  fs::create_symlink(outside_, work_ + "/dirlink");
  fs::create_directories(work_ + "/a_dir/inner");
  std::ofstream(work_ + "/a_file") << "old";
  auto r = spawn(with_shell(step_argv(m, work_,
                                      {{"link", "pwned", 0644},
                                       {"link2", "pwned", 0644},
                                       {"dirlink/passwd", "pwned", 0644},
                                       {"a_dir", "now a file", 0644},
                                       {"a_file/sub", "file became a dir", 0644}},
                                      "", {"true"})),
                 work_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(outside_ + "/target.txt"));
  EXPECT_EQ(slurp(outside_ + "/existing.txt"), "keep");
  EXPECT_FALSE(fs::exists(outside_ + "/passwd"));
  EXPECT_FALSE(fs::is_symlink(work_ + "/link"));
  EXPECT_EQ(slurp(work_ + "/link"), "pwned");
  EXPECT_EQ(slurp(work_ + "/link2"), "pwned");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(work_ + "/dirlink")));
  EXPECT_EQ(slurp(work_ + "/dirlink/passwd"), "pwned");
  EXPECT_EQ(slurp(work_ + "/a_dir"), "now a file");
  EXPECT_EQ(slurp(work_ + "/a_file/sub"), "file became a dir");
}

TEST_P(HelperShell, StepReportsWhatItCouldNotDo) {
  const std::string m = new_control_marker();
  auto missing = spawn(with_shell(step_argv(m, work_, {}, "echo after", {"/no/such/program", "x"})), work_);
  EXPECT_EQ(missing.exit_code, 127);
  ControlFilter f(m);
  filtered(f, missing.err, 4096);
  ASSERT_NE(f.find('E'), nullptr) << missing.err;
  EXPECT_NE(f.find('E')->payload.find("/no/such/program"), std::string::npos);
  EXPECT_EQ(f.find('A'), nullptr) << "the after command runs only after a program";
  auto not_in_path = spawn(with_shell(step_argv(m, work_, {}, "", {"no-such-command-corral"})), work_);
  EXPECT_EQ(not_in_path.exit_code, 127);
  // A file that cannot be written (its directory is read-only) stops the step before the program.
  fs::create_directories(work_ + "/ro");
  chmod((work_ + "/ro").c_str(), 0555);
  if (geteuid() != 0) {  // root writes anyway
    auto ro = spawn(with_shell(step_argv(m, work_, {{"ro/f", "x", 0644}}, "", {"/bin/sh", "-c", "echo ran"})), work_);
    EXPECT_EQ(ro.exit_code, 125);
    EXPECT_EQ(ro.out, "");
  }
  chmod((work_ + "/ro").c_str(), 0755);
}

TEST_P(HelperShell, DetachReportsARunningProgramOrItsExit) {
  const std::string m = new_control_marker();
  const std::string fifos = root_ + "/fifos";
  auto d = spawn(with_shell(detach_argv(m, fifos, std::nullopt,
                                        {"/bin/sh", "-c", "echo ready; echo warn >&2; exec >/dev/null 2>&1; sleep 30"})),
                 work_);
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, "ready\n");
  ControlFilter f(m);
  EXPECT_EQ(filtered(f, d.err, 4096), "warn\n");
  ASSERT_NE(f.find('D'), nullptr) << d.err;
  auto program = DetachedProgram::parse(f.find('D')->payload);
  ASSERT_TRUE(program) << f.find('D')->payload;
  const pid_t pid = std::stoi(program->pid);
  EXPECT_EQ(kill(pid, 0), 0) << "still running";
  EXPECT_EQ(std::to_string(getsid(pid)), program->sid);
  EXPECT_FALSE(fs::exists(fifos)) << "the fifos are removed";
  // While it runs, another is refused.
  auto again = spawn(with_shell(detach_argv(m, fifos, program, {"/bin/sh", "-c", "exit 0"})), work_);
  EXPECT_EQ(again.exit_code, 125);
  EXPECT_NE(again.err.find("already running"), std::string::npos) << again.err;
  kill(pid, SIGKILL);
  for (int i = 0; i < 200 && kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // One killed by a signal before detaching: 128+N, and no shell report in its stderr.
  auto killed = spawn(with_shell(detach_argv(m, fifos, program, {"/bin/sh", "-c", "echo bye >&2; kill -TERM $$"})), work_);
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  EXPECT_EQ(killed.err, "bye\n");
  // One that exits instead of detaching is an ordinary exit.
  auto exits = spawn(with_shell(detach_argv(m, fifos, program, {"/bin/sh", "-c", "echo no >&2; exit 4"})), work_);
  EXPECT_EQ(exits.exit_code, 4);
  ControlFilter g(m);
  EXPECT_EQ(filtered(g, exits.err, 4096), "no\n");
  EXPECT_EQ(g.find('D'), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Shells, HelperShell, ::testing::Values("/usr/bin/dash", "busybox", "/usr/bin/bash"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return i.param == "busybox" ? std::string("busybox") : fs::path(i.param).filename().string();
                         });

}  // namespace
}  // namespace corral::docker
