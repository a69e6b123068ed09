// Images on the container backends: import a rootfs directory, build from a Dockerfile,
// commit a sandbox into a new tag (never over the base image or an existing tag); with
// keep_template false, what an executor made goes with it (and nothing else does).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

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

  // A rootfs of one static binary: busybox, as tools/engines uses. Empty if not installed.
  std::string busybox_rootfs() {
    const char* busybox = "/usr/bin/busybox";
    if (access(busybox, X_OK) != 0) return "";
    const std::string dir = temp_dir();
    std::filesystem::create_directories(dir + "/bin");
    std::filesystem::copy_file(busybox, dir + "/bin/busybox");
    for (const char* a : {"sh", "echo", "sleep", "kill", "cat"}) std::filesystem::create_symlink("busybox", dir + "/bin/" + a);
    for (const char* d : {"/tmp", "/sandbox", "/etc"}) std::filesystem::create_directories(dir + d);
    std::ofstream(dir + "/etc/passwd") << "root:x:0:0::/:/bin/sh\n";
    return dir;
  }

  // Another executor on the same engine, with `keep` as its keep_template.
  std::unique_ptr<docker::DockerExecutor> connect_keeping(bool keep, const std::string& image = "") {
    docker::EngineOptions o = ex_->options();
    o.keep_template = keep;
    if (!image.empty()) o.image = image;
    auto ex = docker::DockerExecutor::connect(o);
    EXPECT_TRUE(ex.ok()) << ex.status().to_string();
    return ex.ok() ? std::move(ex).value() : nullptr;
  }

  // The engine's answer to GET /images/{name}/json: 200, or 404 when it has no such image.
  long image_status(const std::string& name) {
    auto r = ex_->client().send({"GET", ex_->options().api_prefix + "/images/" + name + "/json"});
    return r.ok() ? r->status : -1;
  }
  std::string image_id(const std::string& name) {
    auto r = ex_->client().send({"GET", ex_->options().api_prefix + "/images/" + name + "/json"});
    if (!r.ok() || r->status != 200) return "";
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    return j.is_object() ? j.value("Id", "") : "";
  }
  // Every image (intermediate ones included) and every container (stopped ones included)
  // the engine holds, by id.
  std::set<std::string> ids(const std::string& what) {
    auto r = ex_->client().send({"GET", ex_->options().api_prefix + "/" + what + "/json?all=1"});
    std::set<std::string> out;
    EXPECT_TRUE(r.ok() && r->status == 200) << "list " << what;
    if (!r.ok()) return out;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_array()) {
      for (const auto& e : j) out.insert(e.value("Id", ""));
    }
    return out;
  }
  struct Snapshot {
    std::set<std::string> images, containers;
    std::string base;
  };
  Snapshot snapshot() { return {ids("images"), ids("containers"), image_id(test_image())}; }
  // What is in the engine now and was not at `before`, as text; empty when nothing.
  std::string left_behind(const Snapshot& before) {
    std::string out;
    for (const auto& [what, then] : {std::pair{"images", &before.images}, std::pair{"containers", &before.containers}}) {
      for (const std::string& id : ids(what)) {
        if (!then->count(id)) out += std::string(what) + " " + id + "; ";
      }
    }
    return out;
  }

  struct Made {
    std::string tag, id;
  };
  // An image made by `ex` the way `how` says: "import" (a busybox rootfs), "build" (a
  // Dockerfile FROM the base image) or "commit" (a sandbox of the base image).
  Made make_image(docker::DockerExecutor& ex, const std::string& how) {
    Made m{unique_tag("keep-" + how), ""};
    StatusOr<std::string> id = Internal("not made");
    if (how == "import") {
      const std::string dir = busybox_rootfs();
      if (dir.empty()) return {};
      id = ex.import_rootfs(dir, m.tag);
    } else if (how == "build") {
      const std::string dir = temp_dir();
      std::ofstream(dir + "/Dockerfile") << "FROM " << test_image() << "\nCOPY note.txt /note.txt\n";
      std::ofstream(dir + "/note.txt") << how << "\n";
      id = ex.build_image(dir, "Dockerfile", m.tag);
    } else {
      auto sb = ex.create(SandboxSpec{});
      EXPECT_TRUE(sb.ok()) << sb.status().to_string();
      if (!sb.ok()) return {};
      id = ex.commit(**sb, m.tag);
      EXPECT_TRUE(ex.destroy(**sb).ok());
    }
    EXPECT_TRUE(id.ok()) << how << ": " << id.status().to_string();
    if (!id.ok()) return {};
    m.id = *id;
    remove_.push_back(m.tag);  // only if a test fails before it is gone
    remove_.push_back(m.id);
    return m;
  }

  // keep_template false: the image `how` made is gone once its executor is, by id and by
  // tag, the base image is the same image as before, and nothing else is left.
  void expect_removed_with_executor(const std::string& how) {
    const Snapshot before = snapshot();
    ASSERT_FALSE(before.base.empty());
    Made m;
    {
      auto ex = connect_keeping(false);
      ASSERT_TRUE(ex);
      m = make_image(*ex, how);
      if (m.id.empty() && how == "import" && access("/usr/bin/busybox", X_OK) != 0) {
        GTEST_SKIP() << "busybox-static is not installed";
      }
      ASSERT_FALSE(m.id.empty());
      ASSERT_EQ(image_status(m.id), 200) << how << " " << m.id;
      ASSERT_EQ(image_status(m.tag), 200) << how << " " << m.tag;
    }
    EXPECT_EQ(image_status(m.id), 404) << how << ": image " << m.id << " outlived its executor";
    EXPECT_EQ(image_status(m.tag), 404) << how << ": tag " << m.tag << " outlived its executor";
    EXPECT_EQ(image_id(test_image()), before.base) << "the base image changed";
    EXPECT_EQ(left_behind(before), "");
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
  const std::string dir = busybox_rootfs();
  if (dir.empty()) GTEST_SKIP() << "busybox-static is not installed";
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

TEST_P(Images, NotKeptImportedImageGoesWithItsExecutor) { expect_removed_with_executor("import"); }
TEST_P(Images, NotKeptBuiltImageGoesWithItsExecutor) { expect_removed_with_executor("build"); }
TEST_P(Images, NotKeptCommittedImageGoesWithItsExecutor) { expect_removed_with_executor("commit"); }

// keep_template true (the default): every image the executor made outlives it.
TEST_P(Images, KeptImagesOutliveTheirExecutor) {
  const Snapshot before = snapshot();
  std::vector<Made> made;
  {
    auto ex = connect_keeping(true);
    ASSERT_TRUE(ex);
    for (const char* how : {"import", "build", "commit"}) {
      Made m = make_image(*ex, how);
      if (m.id.empty() && std::string(how) == "import") continue;  // no busybox: the other two
      ASSERT_FALSE(m.id.empty()) << how;
      made.push_back(m);
    }
  }
  ASSERT_GE(made.size(), 2u);
  for (const Made& m : made) {
    EXPECT_EQ(image_status(m.id), 200) << m.tag << " (" << m.id << ") went with its executor";
    EXPECT_EQ(image_status(m.tag), 200) << m.tag;
    auto r = ex_->client().send({"DELETE", ex_->options().api_prefix + "/images/" + m.tag});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << "removing " << m.tag << ": " << r->body;
    EXPECT_EQ(image_status(m.id), 404) << m.id;
  }
  EXPECT_EQ(image_id(test_image()), before.base);
  EXPECT_EQ(left_behind(before), "");
}

// keep_template false, but a container (another executor's sandbox) still uses the image:
// the sandbox keeps running and the image keeps its tag (a forced removal would take the
// container with it on Podman, and leave an untagged image behind on Docker).
TEST_P(Images, NotKeptImageInUseStaysWithItsContainer) {
  const Snapshot before = snapshot();
  auto maker = connect_keeping(false);
  ASSERT_TRUE(maker);
  const Made m = make_image(*maker, "commit");
  ASSERT_FALSE(m.id.empty());
  auto user = connect_keeping(true, m.tag);
  ASSERT_TRUE(user);
  auto sb = user->create(SandboxSpec{});
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  Status removed = maker->remove_owned_images();
  EXPECT_FALSE(removed.ok()) << "removing an image in use reported success";
  EXPECT_NE(removed.message().find(m.tag), std::string::npos) << removed.to_string();
  maker.reset();  // its destructor tries again: still in use, still kept
  EXPECT_EQ(image_status(m.tag), 200) << "the image in use lost its tag";
  ExecRequest req;
  req.argv = {"/usr/bin/python3", "-c", "print('still here')"};
  auto r = user->exec(**sb, req);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->stdout_data, "still here\n") << r->stderr_data;
  EXPECT_TRUE(user->destroy(**sb).ok());
  user.reset();
  // Once the container is gone the image can go (the test's own clean-up, unforced).
  auto del = ex_->client().send({"DELETE", ex_->options().api_prefix + "/images/" + m.tag});
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(image_status(m.id), 404);
  EXPECT_EQ(left_behind(before), "");
}

INSTANTIATE_TEST_SUITE_P(Engines, Images, ::testing::Values("docker", "podman"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace corral
