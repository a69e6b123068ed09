// The prepared /dev (runtime/dev_template.h): made once with the host's device numbers,
// found again by later callers, and declined on a filesystem mounted nodev.
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "runtime/dev_template.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

class DevTemplate : public SandboxTestWithDir {
 protected:
  DevTemplate() : SandboxTestWithDir("/var/tmp/corral-devtest-XXXXXX") {}
};

TEST_F(DevTemplate, MadeOnceWithTheHostsDevices) {
  struct statvfs vfs;
  ASSERT_EQ(statvfs(dir_.c_str(), &vfs), 0);
  if (vfs.f_flag & ST_NODEV) GTEST_SKIP() << dir_ << " is on a nodev filesystem here: no device nodes to test";
  const std::string dev = dir_ + "/dev-v1";
  auto made = runtime::ensure_dev_template(dev);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  ASSERT_EQ(*made, dev);
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    struct stat ours, host;
    ASSERT_EQ(lstat((dev + "/" + node).c_str(), &ours), 0) << node;
    ASSERT_EQ(stat((std::string("/dev/") + node).c_str(), &host), 0) << node;
    EXPECT_TRUE(S_ISCHR(ours.st_mode)) << node;
    EXPECT_EQ(ours.st_rdev, host.st_rdev) << node;
    EXPECT_EQ(ours.st_mode & 0777, 0666u) << node;
    EXPECT_EQ(ours.st_uid, 0u) << node;
  }
  EXPECT_EQ(fs::read_symlink(dev + "/ptmx"), "pts/ptmx");
  EXPECT_TRUE(fs::is_directory(dev + "/pts"));
  EXPECT_TRUE(fs::is_directory(dev + "/shm"));
  // Found again as it is; nothing is left beside it.
  struct stat before, again;
  ASSERT_EQ(stat(dev.c_str(), &before), 0);
  auto second = runtime::ensure_dev_template(dev);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, dev);
  ASSERT_EQ(stat(dev.c_str(), &again), 0);
  EXPECT_EQ(before.st_ino, again.st_ino);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(DevTemplate, DeclinedOnANodevFilesystem) {
  // In a child with a mount namespace of its own: a nodev tmpfs over the test directory.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(10);
    if (mount("tmpfs", dir_.c_str(), "tmpfs", MS_NODEV, "size=1m") != 0) _exit(11);
    auto made = runtime::ensure_dev_template(dir_ + "/dev-v1");
    if (!made.ok()) _exit(12);
    if (!made->empty()) _exit(13);
    _exit(access((dir_ + "/dev-v1").c_str(), F_OK) == 0 ? 14 : 0);  // not even made
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10/11: setup failed, 12: error, 13: a template on a nodev filesystem, 14: made there anyway";
}

}  // namespace
}  // namespace corral::testing
