// Images on the container backends: import a rootfs directory, build from a Dockerfile,
// commit a sandbox into a new tag (never over the base image or an existing tag).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "backends/docker/docker_executor.h"
#include "backends/podman/podman_executor.h"

namespace corral {
namespace {

std::string test_image() {
  const char* v = getenv("CORRAL_TEST_IMAGE");
  return v && *v ? v : "corral-test:latest";
}

std::string unique_tag(const std::string& what) {
  std::random_device rd;
  return "corral-contract-" + what + ":t" + std::to_string(rd() % 1000000);
}

class Images : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (the engines' sockets are root's)";
    StatusOr<std::unique_ptr<docker::DockerExecutor>> ex =
        GetParam() == "podman" ? podman::connect({.image = test_image()})
                               : docker::DockerExecutor::connect({.image = test_image()});
    if (!ex.ok()) GTEST_SKIP() << GetParam() << " not reachable: " << ex.status().to_string();
    ex_ = std::move(ex).value();
    auto has = ex_->image_exists(test_image());
    if (!has.ok() || !*has) GTEST_SKIP() << "no image " << test_image() << " (tools/engines start)";
  }
  void TearDown() override {
    for (const auto& t : remove_) (void)ex_->client().send({"DELETE", ex_->options().api_prefix + "/images/" + t + "?force=1"});
  }

  std::string temp_dir() {
    char tmpl[] = "/tmp/corral-images-XXXXXX";
    std::string d = mkdtemp(tmpl);
    dirs_.push_back(d);
    return d;
  }
  ~Images() override {
    for (const auto& d : dirs_) std::filesystem::remove_all(d);
  }

  std::unique_ptr<docker::DockerExecutor> ex_;
  std::vector<std::string> remove_;
  std::vector<std::string> dirs_;
};

TEST_P(Images, CommitOnlyIntoANewTag) {
  auto sb = ex_->create(SandboxSpec{});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "open('/sandbox/state.txt','w').write('kept')"};
  ASSERT_TRUE(ex_->exec(**sb, req).ok());
  auto over_base = ex_->commit(**sb, test_image());
  EXPECT_FALSE(over_base.ok());
  EXPECT_EQ(over_base.status().field(), "tag");
  const std::string tag = unique_tag("commit");
  auto id = ex_->commit(**sb, tag);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  remove_.push_back(tag);
  EXPECT_TRUE(*ex_->image_exists(tag));
  auto again = ex_->commit(**sb, tag);
  EXPECT_FALSE(again.ok()) << "committed over an existing tag";
  EXPECT_TRUE(ex_->destroy(**sb).ok());
  EXPECT_TRUE(*ex_->image_exists(test_image()));
}

TEST_P(Images, BuildFromDockerfile) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/Dockerfile") << "FROM " << test_image() << "\nCOPY greeting.txt /greeting.txt\n";
  std::ofstream(dir + "/greeting.txt") << "built by corral\n";
  const std::string tag = unique_tag("build");
  auto id = ex_->build_image(dir, "Dockerfile", tag);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  remove_.push_back(tag);
  docker::EngineOptions o = ex_->options();
  o.image = tag;
  auto built = docker::DockerExecutor::connect(o);
  ASSERT_TRUE(built.ok());
  ExecRequest req;
  req.argv = {"cat", "/greeting.txt"};
  auto r = (*built)->run_once(SandboxSpec{}, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "built by corral\n") << r->stderr_data;
}

TEST_P(Images, BuildErrorCarriesTheEnginesMessage) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/Dockerfile") << "FROM " << test_image() << "\nCOPY missing.txt /x\n";
  auto id = ex_->build_image(dir, "Dockerfile", unique_tag("broken"));
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("missing.txt"), std::string::npos) << id.status().to_string();
}

TEST_P(Images, ImportRootfs) {
  // A rootfs of one static binary: busybox, as tools/engines uses.
  const char* busybox = "/usr/bin/busybox";
  if (access(busybox, X_OK) != 0) GTEST_SKIP() << "busybox-static is not installed";
  const std::string dir = temp_dir();
  std::filesystem::create_directories(dir + "/bin");
  std::filesystem::copy_file(busybox, dir + "/bin/busybox");
  for (const char* a : {"sh", "echo", "sleep", "kill", "cat"}) std::filesystem::create_symlink("busybox", dir + "/bin/" + a);
  for (const char* d : {"/tmp", "/sandbox", "/etc"}) std::filesystem::create_directories(dir + d);
  std::ofstream(dir + "/etc/passwd") << "root:x:0:0::/:/bin/sh\n";
  const std::string tag = unique_tag("import");
  auto id = ex_->import_rootfs(dir, tag);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  remove_.push_back(tag);
  EXPECT_TRUE(*ex_->image_exists(tag));
  docker::EngineOptions o = ex_->options();
  o.image = tag;
  auto imported = docker::DockerExecutor::connect(o);
  ASSERT_TRUE(imported.ok());
  ExecRequest req;
  req.argv = {"/bin/echo", "from the imported rootfs"};
  auto r = (*imported)->run_once(SandboxSpec{}, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "from the imported rootfs\n") << r->stderr_data;
}

// Connecting to a container that already exists: used, never stopped; refused when its
// limits are weaker than the policy's.
TEST_P(Images, AttachToAnExistingContainerWithoutOwningIt) {
  auto owner_sb = ex_->create(SandboxSpec{});
  ASSERT_TRUE(owner_sb.ok()) << owner_sb.status().to_string();
  docker::EngineOptions o = ex_->options();
  o.attach_container = (*owner_sb)->id();
  auto attached = docker::DockerExecutor::connect(o);
  ASSERT_TRUE(attached.ok());
  auto sb = (*attached)->create(SandboxSpec{});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "print('attached')"};
  auto r = (*attached)->exec(**sb, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "attached\n");
  EXPECT_TRUE((*attached)->destroy(**sb).ok());
  // Still running: the owner can use it.
  auto again = ex_->exec(**owner_sb, req);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->status(), ExecStatus::kOk);
  // A policy stricter than the container's limits is refused, naming the field.
  Policy strict;
  strict.limits.memory_bytes = 64ull << 20;
  auto refused = (*attached)->create(SandboxSpec{strict});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "limits.memory_bytes");
  EXPECT_TRUE(ex_->destroy(**owner_sb).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, Images, ::testing::Values("docker", "podman"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace corral
