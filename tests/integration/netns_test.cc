// Network namespaces made ahead of time (runtime/netns.h): a PreparedNetns and the stash
// short-lived supervisors share are owned by the host's user namespace, have lo up or down
// as asked, are handed to one sandbox only, and leave no mount behind once released.
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/native_executor.h"
#include "runtime/netns.h"
#include "tests/integration/sandbox_fixture.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

struct Interfaces {
  std::vector<std::string> names;
  bool lo_up = false;
};

// The interfaces of the namespace `fd`, seen from a thread that enters it (network
// namespaces are per-thread) and ends there.
Interfaces interfaces_in(int fd) {
  Interfaces out;
  std::thread t([&] {
    if (setns(fd, CLONE_NEWNET) != 0) return;
    if (struct if_nameindex* list = if_nameindex()) {
      for (auto* i = list; i->if_index != 0; ++i) out.names.push_back(i->if_name);
      if_freenameindex(list);
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq req = {};
    strcpy(req.ifr_name, "lo");
    if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &req) == 0) out.lo_up = req.ifr_flags & IFF_UP;
    if (s >= 0) close(s);
  });
  t.join();
  return out;
}

// Host mounts whose mount point lies beneath `dir`.
int mounts_beneath(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, devno, root, point;
    f >> id >> parent >> devno >> root >> point;
    if (point.rfind(dir + "/", 0) == 0) ++n;
  }
  return n;
}

ino_t own_netns() {
  struct stat st;
  return stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
}

class NetnsStashTest : public SandboxTestWithDir {
 protected:
  NetnsStashTest() : SandboxTestWithDir("/run/corral-netns-test-XXXXXX") {}
  void SetUp() override {
    SandboxTestWithDir::SetUp();
    if (!dir_.empty()) stash_dir_ = dir_ + "/netns";
  }
  void TearDown() override {
    if (!stash_dir_.empty()) {
      runtime::NetnsStash(stash_dir_).clear();
      EXPECT_EQ(mounts_beneath(stash_dir_), 0);
    }
    SandboxTestWithDir::TearDown();
  }
  std::string stash_dir_;
};

TEST_F(NetnsStashTest, PreparedNamespaceBelongsToTheHostsUserNamespace) {
  runtime::PreparedNetns prepared(true);
  auto fd = prepared.take();
  ASSERT_TRUE(fd.ok()) << fd.status().to_string();
  EXPECT_TRUE(runtime::is_host_owned_netns(fd->get()));
  struct stat st;
  ASSERT_EQ(fstat(fd->get(), &st), 0);
  EXPECT_NE(st.st_ino, own_netns()) << "not a new namespace";
  Interfaces in = interfaces_in(fd->get());
  EXPECT_EQ(in.names, std::vector<std::string>{"lo"});
  EXPECT_TRUE(in.lo_up);
  // A namespace of another type is refused.
  UniqueFd mnt(open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(runtime::is_host_owned_netns(mnt.get()));
}

TEST_F(NetnsStashTest, TakenOnceWithTheFlavorAskedThenReleased) {
  runtime::NetnsStash stash(stash_dir_);
  EXPECT_FALSE(stash.take(true)) << "an empty stash handed something out";
  ASSERT_TRUE(stash.fill(true, 1).ok());
  ASSERT_TRUE(stash.fill(false, 1).ok());
  EXPECT_EQ(mounts_beneath(stash_dir_), 2);
  struct stat pinned;
  ASSERT_EQ(stat((stash_dir_ + "/lo-0/ns").c_str(), &pinned), 0);

  auto up = stash.take(true);
  ASSERT_TRUE(up);
  struct stat st;
  ASSERT_EQ(fstat(up->fd.get(), &st), 0);
  EXPECT_EQ(st.st_ino, pinned.st_ino) << "not the namespace that was stashed";
  EXPECT_NE(st.st_ino, own_netns());
  EXPECT_TRUE(runtime::is_host_owned_netns(up->fd.get()));
  Interfaces in = interfaces_in(up->fd.get());
  EXPECT_EQ(in.names, std::vector<std::string>{"lo"});
  EXPECT_TRUE(in.lo_up);
  EXPECT_FALSE(stash.take(true)) << "the one loopback namespace was handed out twice";

  auto down = stash.take(false);
  ASSERT_TRUE(down);
  EXPECT_FALSE(interfaces_in(down->fd.get()).lo_up) << "network none: lo must stay down";
  EXPECT_FALSE(stash.take(false));

  // Released: unpinned, the claim gone; the namespace lives while someone holds it.
  runtime::NetnsStash::release(up->claimed);
  runtime::NetnsStash::release(down->claimed);
  EXPECT_EQ(mounts_beneath(stash_dir_), 0);
  EXPECT_FALSE(fs::exists(up->claimed));
  EXPECT_TRUE(interfaces_in(up->fd.get()).lo_up);
}

TEST_F(NetnsStashTest, FillKeepsAtMostTheSlotsAndReleasesClaimsOfDeadProcesses) {
  runtime::NetnsStash stash(stash_dir_);
  ASSERT_TRUE(stash.fill(true, 5).ok());
  EXPECT_EQ(mounts_beneath(stash_dir_), runtime::NetnsStash::kSlots);
  ASSERT_TRUE(stash.fill(true, 1).ok());
  EXPECT_EQ(mounts_beneath(stash_dir_), runtime::NetnsStash::kSlots) << "fill made one where enough waited";
  // A process that claims one and dies without releasing it.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(stash.take(true) ? 0 : 1);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  auto claims = [&] {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(stash_dir_)) {
      if (e.path().filename().string().rfind(".claimed-" + std::to_string(child) + "-", 0) == 0) out.push_back(e.path());
    }
    return out;
  };
  ASSERT_EQ(claims().size(), 1u);
  EXPECT_EQ(mounts_beneath(stash_dir_), runtime::NetnsStash::kSlots);  // still pinned, unused by anyone
  ASSERT_TRUE(stash.fill(true, 1).ok());
  EXPECT_TRUE(claims().empty()) << "a dead process's claim was kept";
  // The claimed slot made again (fill keeps the first `want` slots full), the other as it was.
  EXPECT_EQ(mounts_beneath(stash_dir_), runtime::NetnsStash::kSlots);
  EXPECT_EQ(stash.clear(), runtime::NetnsStash::kSlots);
  EXPECT_EQ(mounts_beneath(stash_dir_), 0);
}

// Mount namespaces made while a namespace is stashed hold a copy of its pin; releasing it
// must unpin those copies too, or the namespace would outlive its sandbox there.
TEST_F(NetnsStashTest, ReleaseUnpinsCopiesInOtherMountNamespaces) {
  runtime::NetnsStash stash(stash_dir_);
  ASSERT_TRUE(stash.fill(true, 1).ok());
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 0;
    if (unshare(CLONE_NEWNS) != 0) _exit(10);
    const int copies = mounts_beneath(stash_dir_);
    if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1) _exit(11);
    // 0: had its copy, and the copy went with the release.
    _exit(copies == 1 && mounts_beneath(stash_dir_) == 0 ? 0 : 20 + copies * 2 + mounts_beneath(stash_dir_));
  }
  char c = 0;
  ASSERT_EQ(read(to_parent[0], &c, 1), 1);
  auto taken = stash.take(true);
  ASSERT_TRUE(taken);
  runtime::NetnsStash::release(taken->claimed);
  ASSERT_EQ(write(to_child[1], &c, 1), 1);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) close(fd);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0) << "20 + 2*copies before + copies after";
}

// The executor side: a short-lived executor's sandbox runs in the stashed namespace, the
// pin goes with the sandbox, and the executor's end stashes a new one for the next process.
TEST_F(NetnsStashTest, ShortLivedExecutorTakesAndRefills) {
  runtime::NativeOptions options;
  options.short_lived = true;
  options.prepared_netns = true;
  const std::string stash_dir = options.state_dir + "/netns";
  runtime::NetnsStash stash(stash_dir);
  ASSERT_TRUE(stash.fill(true, 1).ok());
  struct stat pinned;
  ASSERT_EQ(stat((stash_dir + "/lo-0/ns").c_str(), &pinned), 0);
  {
    runtime::NativeExecutor executor(options);
    auto sb = executor.create(SandboxSpec{});
    ASSERT_TRUE(sb.ok()) << sb.status().to_string();
    ExecRequest req;
    req.argv = {"/usr/bin/readlink", "/proc/self/ns/net"};
    auto r = executor.exec(**sb, req);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->stdout_data, "net:[" + std::to_string(pinned.st_ino) + "]\n");
    // Nobody else can take it now (another sandbox could be made meanwhile: not with this one).
    EXPECT_FALSE(fs::exists(stash_dir + "/lo-0/ns"));
    ASSERT_TRUE(executor.destroy(**sb).ok());
    EXPECT_EQ(mounts_beneath(stash_dir), 0) << "the pin outlived its sandbox";
  }
  struct stat next;
  ASSERT_EQ(stat((stash_dir + "/lo-0/ns").c_str(), &next), 0) << "nothing stashed for the next process";
  EXPECT_NE(next.st_ino, pinned.st_ino);
  EXPECT_EQ(mounts_beneath(stash_dir), 1);
  stash.clear();
  EXPECT_EQ(mounts_beneath(stash_dir), 0);
}

// Without prepared_netns a short-lived executor neither takes from the stash nor fills it.
TEST_F(NetnsStashTest, OffUnlessAsked) {
  runtime::NativeOptions options;
  options.short_lived = true;
  const std::string stash_dir = options.state_dir + "/netns";
  runtime::NetnsStash(stash_dir).clear();
  {
    runtime::NativeExecutor executor(options);
    auto sb = executor.create(SandboxSpec{});
    ASSERT_TRUE(sb.ok()) << sb.status().to_string();
    ExecRequest req;
    req.argv = {"/bin/true"};
    auto r = executor.exec(**sb, req);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_TRUE(executor.destroy(**sb).ok());
  }
  EXPECT_EQ(mounts_beneath(stash_dir), 0) << "a namespace was stashed though nobody asked";
}

}  // namespace
}  // namespace corral::testing
