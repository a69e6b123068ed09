// Seccomp profiles and compiler: parsing errors, digests, the disk cache, syscall names, the
// compiled default filter evaluated on synthetic syscalls (a small classic-BPF interpreter), and
// the filter really loaded into the kernel in a forked child (unprivileged: no_new_privs).
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "seccomp/compiler.h"
#include "seccomp/profile.h"
#include "seccomp/sha256.h"
#include "seccomp/simulate.h"

namespace corral::seccomp {
namespace {

using nlohmann::json;

// Unless the caller chose one, the disk cache goes to a private temp dir, not /var/cache.
class CacheDirEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (std::getenv("CORRAL_CACHE_DIR")) return;
    char tmpl[] = "/tmp/corral-seccomp-cache.XXXXXX";
    if (mkdtemp(tmpl)) {
      dir_ = tmpl;
      setenv("CORRAL_CACHE_DIR", tmpl, 1);
    }
  }
  void TearDown() override {
    if (dir_.empty()) return;
    unsetenv("CORRAL_CACHE_DIR");
    (void)!std::system(("rm -rf '" + dir_ + "'").c_str());
  }

 private:
  std::string dir_;
};
::testing::Environment* const g_cache_env = ::testing::AddGlobalTestEnvironment(new CacheDirEnvironment);

std::string default_profile_path() { return profile_dir() + "/default.json"; }

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/corral-seccomp-test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { (void)!std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Data {
  int nr;
  uint32_t arch;
  uint64_t args[6];
};

// The filter's verdict for one syscall (see seccomp/simulate.h).
uint32_t run_filter(const std::vector<sock_filter>& f, const Data& d) {
  seccomp_data sd{};
  sd.nr = d.nr;
  sd.arch = d.arch;
  for (int i = 0; i < 6; ++i) sd.args[i] = d.args[i];
  auto r = simulate(f, sd);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : 0;
}

constexpr uint64_t kAtFdcwd = static_cast<uint64_t>(static_cast<int64_t>(AT_FDCWD));
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kNotify = SECCOMP_RET_USER_NOTIF;
constexpr uint32_t Errno(int e) { return SECCOMP_RET_ERRNO | static_cast<uint32_t>(e); }

std::shared_ptr<const Program> default_program() {
  auto r = load("default");
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : nullptr;
}

// ---------------------------------------------------------------------------------------------

TEST(SeccompProfile, DefaultLoadsAndCompiles) {
  auto p = default_program();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "default");
  EXPECT_EQ(p->digest.size(), 64u);
  EXPECT_GT(p->filter.size(), 50u);
  EXPECT_LE(p->filter.size(), static_cast<size_t>(BPF_MAXINSNS));
  EXPECT_TRUE(p->uses_notify);  // bad_arch_action is kill
  EXPECT_EQ(BPF_CLASS(p->filter.back().code), BPF_RET);
  auto again = load("default");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), p.get()) << "second load should come from the memory cache";
  sock_fprog fp = p->fprog();
  EXPECT_EQ(fp.len, p->filter.size());
}

TEST(SeccompProfile, EveryShippedProfileCompiles) {
  DIR* d = opendir(profile_dir().c_str());
  ASSERT_TRUE(d) << profile_dir();
  int n = 0;
  while (dirent* e = readdir(d)) {
    std::string file = e->d_name;
    if (file.size() <= 5 || file.substr(file.size() - 5) != ".json") continue;
    std::string name = file.substr(0, file.size() - 5);
    auto r = load(name);
    EXPECT_TRUE(r.ok()) << file << ": " << r.status().to_string();
    if (r.ok()) {
      EXPECT_EQ((*r)->name, name) << file << ": the profile's name should match its file name";
    }
    ++n;
  }
  closedir(d);
  EXPECT_GE(n, 1);
}

struct BadCase {
  const char* what;
  json profile;
  const char* field;
  const char* message_part;
};

json base_profile() {
  return json{{"name", "t"},
              {"default_action", "errno:EPERM"},
              {"rules", json::array({json{{"names", {"read", "write"}}, {"action", "allow"}}})}};
}

json with_rule(json rule) {
  json p = base_profile();
  p["rules"].push_back(std::move(rule));
  return p;
}

TEST(SeccompProfile, ErrorsNameTheField) {
  std::vector<BadCase> cases = {
      {"unknown top-level key", [] { json p = base_profile(); p["defualt"] = 1; return p; }(), "defualt",
       "unknown field"},
      {"missing name", [] { json p = base_profile(); p.erase("name"); return p; }(), "name", "required"},
      {"bad name", [] { json p = base_profile(); p["name"] = "a/b"; return p; }(), "name", ""},
      {"bad default action", [] { json p = base_profile(); p["default_action"] = "deny"; return p; }(),
       "default_action", "unknown action"},
      {"unknown errno", [] { json p = base_profile(); p["default_action"] = "errno:EWHAT"; return p; }(),
       "default_action", "unknown errno"},
      {"errno out of range", [] { json p = base_profile(); p["default_action"] = "errno:5000"; return p; }(),
       "default_action", "between"},
      {"bad_arch allow", [] { json p = base_profile(); p["bad_arch_action"] = "allow"; return p; }(),
       "bad_arch_action", "foreign"},
      {"rules not array", [] { json p = base_profile(); p["rules"] = json::object(); return p; }(), "rules",
       "array"},
      {"unknown rule key", with_rule({{"names", {"getpid"}}, {"action", "allow"}, {"nmes", 1}}), "rules[1].nmes",
       "unknown field"},
      {"bad rule action", with_rule({{"names", {"getpid"}}, {"action", "deny"}}), "rules[1].action",
       "unknown action"},
      {"names not strings", with_rule({{"names", {"getpid", 3}}, {"action", "allow"}}), "rules[1].names[1]",
       "string"},
      {"empty names", with_rule({{"names", json::array()}, {"action", "allow"}}), "rules[1].names", "at least"},
      {"bad op",
       with_rule({{"names", {"socket"}}, {"action", "allow"}, {"args", {{{"index", 0}, {"op", "eqq"}, {"value", 1}}}}}),
       "rules[1].args[0].op", "unknown op"},
      {"index out of range",
       with_rule({{"names", {"socket"}}, {"action", "allow"}, {"args", {{{"index", 6}, {"op", "eq"}, {"value", 1}}}}}),
       "rules[1].args[0].index", "at most 5"},
      {"negative index",
       with_rule({{"names", {"socket"}}, {"action", "allow"}, {"args", {{{"index", -1}, {"op", "eq"}, {"value", 1}}}}}),
       "rules[1].args[0].index", "negative"},
      {"masked_eq without mask",
       with_rule({{"names", {"socket"}},
                  {"action", "allow"},
                  {"args", {{{"index", 0}, {"op", "masked_eq"}, {"value", 1}}}}}),
       "rules[1].args[0].mask", "required"},
      {"mask with eq",
       with_rule({{"names", {"socket"}},
                  {"action", "allow"},
                  {"args", {{{"index", 0}, {"op", "eq"}, {"mask", 1}, {"value", 1}}}}}),
       "rules[1].args[0].mask", "only"},
      {"value outside mask",
       with_rule({{"names", {"socket"}},
                  {"action", "allow"},
                  {"args", {{{"index", 0}, {"op", "masked_eq"}, {"mask", "0xf"}, {"value", 16}}}}}),
       "rules[1].args[0].value", "outside mask"},
      {"bad hex value",
       with_rule({{"names", {"socket"}}, {"action", "allow"}, {"args", {{{"index", 0}, {"op", "eq"}, {"value", "0xZZ"}}}}}),
       "rules[1].args[0].value", "0x"},
      {"same arg twice",
       with_rule({{"names", {"socket"}},
                  {"action", "allow"},
                  {"args", {{{"index", 0}, {"op", "eq"}, {"value", 1}}, {{"index", 0}, {"op", "eq"}, {"value", 2}}}}}),
       "rules[1].args[1].index", "already compared"},
      {"unknown arg key",
       with_rule({{"names", {"socket"}},
                  {"action", "allow"},
                  {"args", {{{"index", 0}, {"op", "eq"}, {"value", 1}, {"vlaue", 2}}}}}),
       "rules[1].args[0].vlaue", "unknown field"},
      {"unknown syscall", with_rule({{"names", {"getpid", "no_such_syscall"}}, {"action", "allow"}}),
       "rules[1].names[1]", "no_such_syscall"},
      {"conflicting unconditional actions", with_rule({{"names", {"write"}}, {"action", "errno:EACCES"}}),
       "rules[1].names[0]", "rules[0]"},
      {"exception that cannot be compiled",
       with_rule({{"names", {"read"}}, {"action", "errno:EIO"}, {"args", {{{"index", 0}, {"op", "gt"}, {"value", 5}}}}}),
       "rules[1].args", "eq or masked_eq"},
  };
  for (const auto& c : cases) {
    auto r = compile(c.profile);
    ASSERT_FALSE(r.ok()) << c.what << " was accepted";
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << c.what;
    EXPECT_EQ(r.status().field(), c.field) << c.what << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(c.message_part), std::string::npos)
        << c.what << ": " << r.status().to_string();
  }
}

TEST(SeccompProfile, LoadErrorsNameFileAndField) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.json";
  write_file(path, R"({"name":"bad","default_action":"errno:EPERM","rules":[{"names":["read"],"action":"allow",
      "args":[{"index":1,"op":"bogus","value":0}]}]})");
  auto r = load(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "rules[0].args[0].op");
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().to_string();

  write_file(path, "{not json");
  r = load(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not valid JSON"), std::string::npos) << r.status().to_string();

  r = load(dir.path() + "/missing.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);

  r = load("no-such-profile");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);

  r = load("..");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
}

TEST(SeccompProfile, CanonicalJsonRoundTrips) {
  auto parsed = parse_profile(read_json(default_profile_path()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  json canon = profile_to_json(*parsed, true);
  auto again = parse_profile(canon);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(profile_to_json(*again, false), profile_to_json(*parsed, false));
}

TEST(SeccompCompiler, DigestIsStableAndDistinct) {
  json p = read_json(default_profile_path());
  clear_memory_cache();
  auto a = compile(p);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  clear_memory_cache();
  auto b = compile(p);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(cache_stats().compiles, 1u) << "the second compile should not have been a cache hit";
  EXPECT_EQ((*a)->digest, (*b)->digest);
  ASSERT_EQ((*a)->filter.size(), (*b)->filter.size());
  EXPECT_EQ(0, std::memcmp((*a)->filter.data(), (*b)->filter.data(), (*a)->filter.size() * sizeof(sock_filter)));

  json commented = p;
  commented["comment"] = "only a comment changed";
  auto c = compile(commented);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->digest, (*a)->digest) << "comments are not part of the canonical profile";

  json changed = p;
  changed["rules"][0]["names"].erase(changed["rules"][0]["names"].begin());  // drop "read"
  auto d = compile(changed);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_NE((*d)->digest, (*a)->digest);

  json renamed = p;
  renamed["name"] = "other";
  auto e = compile(renamed);
  ASSERT_TRUE(e.ok());
  EXPECT_NE((*e)->digest, (*a)->digest);
  EXPECT_EQ((*e)->name, "other");
}

class SeccompDiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("CORRAL_CACHE_DIR");
    had_old_ = old != nullptr;
    if (old) old_ = old;
    setenv("CORRAL_CACHE_DIR", dir_.path().c_str(), 1);
    clear_memory_cache();
  }
  void TearDown() override {
    if (had_old_) setenv("CORRAL_CACHE_DIR", old_.c_str(), 1);
    else unsetenv("CORRAL_CACHE_DIR");
    clear_memory_cache();
  }
  TempDir dir_;
  TempDir profiles_;
  bool had_old_ = false;
  std::string old_;
};

TEST_F(SeccompDiskCache, RoundTripAndCorruption) {
  EXPECT_EQ(cache_dir(), dir_.path() + "/seccomp");
  const std::string text = read_file(default_profile_path());
  const std::string a = profiles_.path() + "/a.json", b = profiles_.path() + "/b.json";
  write_file(a, text);
  write_file(b, text);

  auto first = load(a);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  CacheStats s = cache_stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.disk_writes, 1u);
  const std::string cache_file = cache_dir() + "/" + (*first)->digest + ".bpf";
  struct stat st;
  ASSERT_EQ(stat(cache_file.c_str(), &st), 0) << cache_file;
  struct stat dst;
  ASSERT_EQ(stat(cache_dir().c_str(), &dst), 0);
  EXPECT_EQ(dst.st_mode & 0777, 0700u);

  // Another path with the same profile, as a fresh process would see it: from disk, no compile.
  clear_memory_cache();
  auto second = load(b);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  s = cache_stats();
  EXPECT_EQ(s.compiles, 0u);
  EXPECT_EQ(s.disk_hits, 1u);
  EXPECT_EQ((*second)->digest, (*first)->digest);
  EXPECT_EQ((*second)->name, "default");
  EXPECT_TRUE((*second)->uses_notify);
  ASSERT_EQ((*second)->filter.size(), (*first)->filter.size());
  EXPECT_EQ(0, std::memcmp((*second)->filter.data(), (*first)->filter.data(),
                           (*first)->filter.size() * sizeof(sock_filter)));

  // Same process, same profile again: memory.
  auto third = load(b);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->get(), second->get());
  EXPECT_EQ(cache_stats().memory_hits, 1u);

  // Corrupt one byte of an instruction: the checksum catches it, the file is rewritten.
  std::string bytes = read_file(cache_file);
  bytes[8 + 64 + 4 + 5] ^= 0x40;
  write_file(cache_file, bytes);
  clear_memory_cache();
  auto fourth = load(a);
  ASSERT_TRUE(fourth.ok()) << fourth.status().to_string();
  s = cache_stats();
  EXPECT_EQ(s.disk_rejects, 1u);
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.disk_writes, 1u);
  EXPECT_EQ(0, std::memcmp((*fourth)->filter.data(), (*first)->filter.data(),
                           (*first)->filter.size() * sizeof(sock_filter)));
  EXPECT_NE(read_file(cache_file), bytes) << "the corrupt cache file was not rewritten";

  // Truncated file.
  bytes = read_file(cache_file);
  write_file(cache_file, bytes.substr(0, bytes.size() / 2));
  clear_memory_cache();
  ASSERT_TRUE(load(a).ok());
  s = cache_stats();
  EXPECT_EQ(s.disk_rejects, 1u);
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(read_file(cache_file), bytes);

  // A file others could have written is not trusted.
  ASSERT_EQ(chmod(cache_file.c_str(), 0666), 0);
  clear_memory_cache();
  ASSERT_TRUE(load(a).ok());
  s = cache_stats();
  EXPECT_EQ(s.disk_hits, 0u);
  EXPECT_EQ(s.disk_rejects, 1u);
  EXPECT_EQ(s.compiles, 1u);

  // Now a clean hit again, and no temp files left behind.
  clear_memory_cache();
  ASSERT_TRUE(load(a).ok());
  EXPECT_EQ(cache_stats().disk_hits, 1u);
  int entries = 0;
  if (DIR* d = opendir(cache_dir().c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, "file-", 5) == 0) continue;  // the path index, tested below
      if (e->d_name[0] != '.' || (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))) {
        ++entries;
        EXPECT_EQ(std::string(e->d_name), (*first)->digest + ".bpf");
      }
    }
    closedir(d);
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(SeccompDiskCache, EditedProfileFileIsReread) {
  const std::string a = profiles_.path() + "/a.json";
  json p = read_json(default_profile_path());
  write_file(a, p.dump());
  auto first = load(a);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  p["name"] = "edited-in-place";
  write_file(a, p.dump());
  auto second = load(a);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ((*second)->name, "edited-in-place");
  EXPECT_NE((*second)->digest, (*first)->digest);
}

TEST_F(SeccompDiskCache, FileIndexSkipsParsingUntilTheFileChanges) {
  const std::string a = profiles_.path() + "/indexed.json";
  json p = read_json(default_profile_path());
  write_file(a, p.dump());
  auto first = load(a);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(cache_stats().index_hits, 0u);
  // A fresh process (memory cache dropped) finds the program through the index.
  clear_memory_cache();
  auto second = load(a);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(cache_stats().index_hits, 1u);
  EXPECT_EQ(cache_stats().compiles, 0u);
  EXPECT_EQ((*second)->digest, (*first)->digest);
  EXPECT_EQ((*second)->name, (*first)->name);
  EXPECT_EQ((*second)->uses_notify, (*first)->uses_notify);
  // An edit changes size/mtime: the index misses and the new content is used.
  p["name"] = "edited";
  p["default_action"] = "errno:EACCES";
  write_file(a, p.dump());
  clear_memory_cache();
  auto third = load(a);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(cache_stats().index_hits, 0u);
  EXPECT_EQ((*third)->name, "edited");
  EXPECT_NE((*third)->digest, (*first)->digest);
  // An index pointing at a program whose cache file is gone still loads (by compiling).
  clear_memory_cache();
  ASSERT_EQ(unlink((cache_dir() + "/" + (*third)->digest + ".bpf").c_str()), 0);
  auto fourth = load(a);
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(cache_stats().compiles, 1u);
  EXPECT_EQ((*fourth)->digest, (*third)->digest);
}

TEST_F(SeccompDiskCache, UntrustedCacheDirIsNotUsed) {
  ASSERT_EQ(mkdir(cache_dir().c_str(), 0777), 0);
  ASSERT_EQ(chmod(cache_dir().c_str(), 0777), 0);
  auto r = load("default");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(cache_stats().disk_writes, 0u);
  EXPECT_EQ(cache_stats().compiles, 1u);
}

TEST(SeccompCompiler, Sha256KnownAnswers) {
  auto digest = [](const std::string& s) {
    Sha256 h;
    h.update(s);
    return Sha256::hex(h.finish());
  };
  EXPECT_EQ(digest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(SeccompSimulate, RejectsMalformedPrograms) {
  seccomp_data d{};
  EXPECT_FALSE(simulate({}, d).ok());
  EXPECT_FALSE(simulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), BPF_STMT(BPF_RET | BPF_K, 0)}, d).ok());
  EXPECT_FALSE(simulate({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 5), BPF_STMT(BPF_RET | BPF_K, 0)}, d).ok());
  EXPECT_FALSE(simulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)}, d).ok()) << "no return";
  d.nr = 7;
  auto r = simulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
                     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 5), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)},
                    d);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(describe_return(*r), "errno:5");
  EXPECT_EQ(describe_return(SECCOMP_RET_USER_NOTIF), "notify");
}

TEST(SeccompNames, SyscallName) {
  EXPECT_EQ(syscall_name(AUDIT_ARCH_X86_64, 39), "getpid");
  EXPECT_EQ(syscall_name(AUDIT_ARCH_I386, 20), "getpid");
  EXPECT_EQ(syscall_name(AUDIT_ARCH_AARCH64, 172), "getpid");
  EXPECT_EQ(syscall_name(AUDIT_ARCH_X86_64, 39 | 0x40000000), "x32:getpid");
  EXPECT_EQ(syscall_name(AUDIT_ARCH_X86_64, 462), "mseal");  // newer than libseccomp 2.5.4
  EXPECT_EQ(syscall_name(AUDIT_ARCH_X86_64, 100000), "syscall#100000 (arch 0xc000003e)");
  EXPECT_EQ(syscall_name(0x12345678, 1).rfind("syscall#1 (arch 0x12345678)", 0), 0u);
  EXPECT_EQ(arch_name(AUDIT_ARCH_I386), "i386");
}

// ---------------------------------------------------------------------------------------------
// The default filter, evaluated on synthetic syscalls, and loaded into the kernel. The syscall
// numbers and ABIs below are x86_64's.
#if defined(__x86_64__)

TEST(SeccompProfile, OptionalRulesSkipUnknownNames) {
  json p = with_rule({{"names", {"getpid", "no_such_syscall"}}, {"action", "allow"}, {"optional", true}});
  auto r = compile(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(run_filter((*r)->filter, {SYS_getpid, AUDIT_ARCH_X86_64, {}}), kAllow);
}


class DefaultFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    prog_ = default_program();
    ASSERT_TRUE(prog_);
  }
  uint32_t eval(int nr, std::initializer_list<uint64_t> args = {}, uint32_t arch = AUDIT_ARCH_X86_64) {
    Data d{nr, arch, {}};
    int i = 0;
    for (uint64_t a : args) d.args[i++] = a;
    return run_filter(prog_->filter, d);
  }
  std::shared_ptr<const Program> prog_;
};

TEST_F(DefaultFilter, ForeignAbisAreKilled) {
  EXPECT_EQ(eval(SYS_getpid), kAllow);
  EXPECT_EQ(eval(SYS_getpid | 0x40000000), kNotify) << "x32 getpid";
  EXPECT_EQ(eval(0x40000000 | 515), kNotify) << "x32 readv";
  EXPECT_EQ(eval(20, {}, AUDIT_ARCH_I386), kNotify) << "i386 getpid";
  EXPECT_EQ(eval(20, {}, AUDIT_ARCH_AARCH64), kNotify);
  EXPECT_EQ(eval(1000), Errno(EPERM)) << "unknown syscall number";
}

TEST_F(DefaultFilter, Namespaces) {
  EXPECT_EQ(eval(SYS_unshare, {CLONE_NEWUSER}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_setns, {3, 0}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_clone, {SIGCHLD}), kAllow) << "fork";
  EXPECT_EQ(eval(SYS_clone, {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                             CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID}),
            kAllow)
      << "pthread_create";
  EXPECT_EQ(eval(SYS_clone, {CLONE_VM | CLONE_VFORK | SIGCHLD}), kAllow) << "posix_spawn";
  for (uint64_t flag : {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                        CLONE_NEWNET}) {
    EXPECT_EQ(eval(SYS_clone, {flag | SIGCHLD}), Errno(EPERM)) << std::hex << flag;
  }
  EXPECT_EQ(eval(SYS_clone3, {0, 88}), Errno(ENOSYS));
  for (int nr : {SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_fsopen, SYS_fsconfig, SYS_fsmount,
                 SYS_fspick, SYS_open_tree, SYS_move_mount, SYS_mount_setattr}) {
    EXPECT_EQ(eval(nr), Errno(EPERM)) << syscall_name(AUDIT_ARCH_X86_64, nr);
  }
}

TEST_F(DefaultFilter, PrivilegedAndRiskyInterfaces) {
  for (int nr : {SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_kexec_file_load,
                 SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
                 SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register, SYS_clock_settime,
                 SYS_clock_adjtime, SYS_settimeofday, SYS_adjtimex, SYS_open_by_handle_at, SYS_name_to_handle_at,
                 SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp, SYS_swapon, SYS_swapoff,
                 SYS_reboot, SYS_acct, SYS_quotactl, SYS_lookup_dcookie, SYS_syslog, SYS_vhangup, SYS_uselib,
                 SYS_ustat, SYS_sysfs, SYS__sysctl, SYS_iopl, SYS_ioperm, SYS_sethostname, SYS_setdomainname,
                 SYS_pidfd_getfd, SYS_modify_ldt}) {
    EXPECT_EQ(eval(nr), Errno(EPERM)) << syscall_name(AUDIT_ARCH_X86_64, nr);
  }
  EXPECT_EQ(eval(SYS_mknodat, {kAtFdcwd, 0, S_IFBLK | 0600, 0x0801}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_mknod, {0, S_IFCHR | 0600, 0x0103}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_mknod, {0, 0x10000 | S_IFBLK | 0600, 0}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_mknodat, {kAtFdcwd, 0, S_IFIFO | 0600, 0}), kAllow) << "mkfifo";
}

TEST_F(DefaultFilter, Personality) {
  for (uint64_t ok : {0x0ull, 0x8ull, 0x20000ull, 0x20008ull, 0xffffffffull}) {
    EXPECT_EQ(eval(SYS_personality, {ok}), kAllow) << std::hex << ok;
  }
  for (uint64_t bad : {uint64_t{READ_IMPLIES_EXEC}, uint64_t{ADDR_NO_RANDOMIZE}, uint64_t{ADDR_NO_RANDOMIZE | 8},
                       uint64_t{0x100000000ull}}) {
    EXPECT_EQ(eval(SYS_personality, {bad}), Errno(EPERM)) << std::hex << bad;
  }
}

TEST_F(DefaultFilter, Sockets) {
  EXPECT_EQ(eval(SYS_socket, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0}), kAllow);
  EXPECT_EQ(eval(SYS_socket, {AF_UNIX, SOCK_DGRAM, 0}), kAllow);
  for (uint64_t fam : {AF_INET, AF_INET6}) {
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0}), kAllow);
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_DGRAM, IPPROTO_UDP}), kAllow);
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_DGRAM, IPPROTO_ICMP}), kAllow) << "ping socket";
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_RAW, IPPROTO_ICMP}), Errno(EPERM));
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP}), Errno(EPERM));
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_PACKET, 0}), Errno(EPERM));
  }
  EXPECT_EQ(eval(SYS_socket, {AF_INET | 0x100000000ull, SOCK_STREAM, 0}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_socket, {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0}), kAllow) << "NETLINK_ROUTE";
  EXPECT_EQ(eval(SYS_socket, {AF_NETLINK, SOCK_RAW, 9}), Errno(EPERM)) << "NETLINK_AUDIT";
  for (uint64_t fam : {AF_PACKET, AF_VSOCK, AF_ALG, AF_BLUETOOTH, AF_KEY}) {
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_RAW, 0}), Errno(EPERM)) << fam;
    EXPECT_EQ(eval(SYS_socket, {fam, SOCK_DGRAM, 0}), Errno(EPERM)) << fam;
  }
  EXPECT_EQ(eval(SYS_socketpair, {AF_UNIX, SOCK_STREAM, 0, 0}), kAllow);
}

TEST_F(DefaultFilter, IoctlAllowsAllButTiocstiAndTioclinux) {
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5412}), Errno(EPERM)) << "TIOCSTI";
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x100005412ull}), Errno(EPERM)) << "TIOCSTI with high bits";
  EXPECT_EQ(eval(SYS_ioctl, {0, 0xffffffff00005412ull}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x541c}), Errno(EPERM)) << "TIOCLINUX";
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x80000000541cull}), Errno(EPERM));
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5401}), kAllow) << "TCGETS";
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5413}), kAllow) << "TIOCGWINSZ";
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5410}), kAllow);
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5414}), kAllow);
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x5416}), kAllow);
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x541e}), kAllow);
  EXPECT_EQ(eval(SYS_ioctl, {0, 0x40049409}), kAllow) << "FICLONE";
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = rng();
    if (i % 2) v = (v & ~0xffffull) | 0x5400 | (v & 0x3f);  // near the tty range
    uint32_t low = static_cast<uint32_t>(v);
    uint32_t want = (low == 0x5412 || low == 0x541c) ? Errno(EPERM) : kAllow;
    ASSERT_EQ(eval(SYS_ioctl, {0, v}), want) << std::hex << v;
  }
}

TEST_F(DefaultFilter, EverydaySyscallsAreAllowed) {
  for (int nr : {SYS_read, SYS_write, SYS_openat, SYS_close, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_brk,
                 SYS_futex, SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_ctl, SYS_rt_sigaction, SYS_rt_sigprocmask,
                 SYS_getrandom, SYS_statx, SYS_newfstatat, SYS_rseq, SYS_clock_gettime, SYS_clock_nanosleep,
                 SYS_execve, SYS_wait4, SYS_exit_group, SYS_prctl, SYS_arch_prctl, SYS_set_robust_list,
                 SYS_set_tid_address, SYS_sched_getaffinity, SYS_prlimit64, SYS_pipe2, SYS_dup2, SYS_getdents64,
                 SYS_madvise, SYS_connect, SYS_sendto, SYS_recvfrom, SYS_fork, SYS_vfork, SYS_kill,
                 SYS_memfd_create, SYS_sysinfo, SYS_uname, SYS_getcwd, SYS_readlink, SYS_poll, SYS_pselect6,
                 SYS_faccessat2, SYS_close_range, SYS_copy_file_range, SYS_sendfile, SYS_membarrier, SYS_fchmodat,
                 SYS_shmget, SYS_pidfd_open, SYS_getpid, SYS_gettid, SYS_tgkill, SYS_sched_yield}) {
    EXPECT_EQ(eval(nr, {0, 0, 0}), kAllow) << syscall_name(AUDIT_ARCH_X86_64, nr);
  }
  EXPECT_EQ(eval(452, {0, 0, 0, 0}), kAllow) << "fchmodat2 (newer than libseccomp 2.5.4's table)";
  EXPECT_EQ(eval(455, {0, 0, 0, 0}), kAllow) << "futex_wait";
}

// Exceptions to an unconditional rule compile to allows for every other value (libseccomp alone
// would silently drop the exception).
TEST(SeccompCompiler, ExceptionsToUnconditionalRules) {
  json p = base_profile();
  p["bad_arch_action"] = "errno:ENOSYS";
  p["rules"].push_back({{"names", {"ioctl"}}, {"action", "allow"}});
  p["rules"].push_back({{"names", {"ioctl"}}, {"action", "errno:ENOTTY"}, {"args", {{{"index", 1}, {"op", "eq"}, {"value", 7}}}}});
  p["rules"].push_back({{"names", {"ioctl"}},
                        {"action", "errno:EPERM"},
                        {"args", {{{"index", 1}, {"op", "masked_eq"}, {"mask", "0xf0"}, {"value", "0x30"}}}}});
  auto r = compile(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (uint64_t v = 0; v < 1024; ++v) {
    uint32_t want = v == 7 ? Errno(ENOTTY) : (v & 0xf0) == 0x30 ? Errno(EPERM) : kAllow;
    ASSERT_EQ(run_filter((*r)->filter, {SYS_ioctl, AUDIT_ARCH_X86_64, {0, v}}), want) << v;
  }
  EXPECT_EQ(run_filter((*r)->filter, {SYS_ioctl, AUDIT_ARCH_X86_64, {0, 7 | (1ull << 40)}}), kAllow);
  EXPECT_FALSE((*r)->uses_notify);
}

TEST(SeccompCompiler, KillActionsUseNotify) {
  json p = base_profile();
  p["bad_arch_action"] = "errno:ENOSYS";
  auto r = compile(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE((*r)->uses_notify);
  EXPECT_EQ(run_filter((*r)->filter, {20, AUDIT_ARCH_I386, {}}), Errno(ENOSYS));
  p["rules"].push_back({{"names", {"getpid"}}, {"action", "kill"}});
  r = compile(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)->uses_notify);
  EXPECT_EQ(run_filter((*r)->filter, {SYS_getpid, AUDIT_ARCH_X86_64, {}}), kNotify);
  p["default_action"] = "kill";
  r = compile(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(run_filter((*r)->filter, {SYS_getppid, AUDIT_ARCH_X86_64, {}}), kNotify);
  EXPECT_EQ(run_filter((*r)->filter, {SYS_read, AUDIT_ARCH_X86_64, {}}), kAllow);
}

// ---------------------------------------------------------------------------------------------
// The real thing: the default filter installed in a forked child (no root needed).

// Collects failures in the child; they travel to the parent through a pipe.
struct ChildReport {
  int fd;
  int failures = 0;
  void fail(const char* what, long got, int err) {
    char buf[256];
    int n = std::snprintf(buf, sizeof(buf), "%s: got %ld errno %d (%s)\n", what, got, err, std::strerror(err));
    (void)!write(fd, buf, static_cast<size_t>(n));
    ++failures;
  }
  void expect_errno(const char* what, long rc, int want) {
    int err = errno;
    if (rc != -1 || err != want) fail(what, rc, err);
  }
  void expect_ok(const char* what, long rc) {
    int err = errno;
    if (rc < 0) fail(what, rc, err);
  }
};

void* thread_fn(void*) { return reinterpret_cast<void*>(42); }

// Runs `body` in a forked child after installing `prog`; returns the child's report.
std::string run_confined(const Program& prog, void (*body)(ChildReport&, int listener)) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    ChildReport rep{p[1]};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      rep.fail("PR_SET_NO_NEW_PRIVS", -1, errno);
      _exit(100);
    }
    sock_fprog fp = prog.fprog();
    long lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                       prog.uses_notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fp);
    if (lfd < 0) {
      rep.fail("seccomp(SECCOMP_SET_MODE_FILTER)", lfd, errno);
      _exit(101);
    }
    body(rep, static_cast<int>(lfd));
    _exit(rep.failures > 0 ? 1 : 0);
  }
  close(p[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) out += "child died with signal " + std::to_string(WTERMSIG(status)) + "\n";
  else if (WEXITSTATUS(status) != 0 && out.empty()) out += "child exit " + std::to_string(WEXITSTATUS(status));
  return out;
}

void denied_and_allowed(ChildReport& r, int) {
  r.expect_errno("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER), EPERM);
  r.expect_errno("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS), EPERM);
  r.expect_errno("clone(CLONE_NEWUSER)", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
  r.expect_errno("keyctl", syscall(SYS_keyctl, 0 /*KEYCTL_GET_KEYRING_ID*/, -3, 0), EPERM);
  r.expect_errno("add_key", syscall(SYS_add_key, "user", "x", "y", 1, -3), EPERM);
  r.expect_errno("socket(AF_PACKET)", socket(AF_PACKET, SOCK_RAW, 0), EPERM);
  r.expect_errno("socket(AF_INET, SOCK_RAW)", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
  r.expect_errno("socket(AF_VSOCK)", socket(AF_VSOCK, SOCK_STREAM, 0), EPERM);
  r.expect_errno("socket(AF_ALG)", socket(AF_ALG, SOCK_SEQPACKET, 0), EPERM);
  char c = 'x';
  r.expect_errno("ioctl(TIOCSTI)", syscall(SYS_ioctl, 0, 0x5412ul, &c), EPERM);
  r.expect_errno("ioctl(TIOCSTI | 1<<32)", syscall(SYS_ioctl, 0, 0x100005412ull, &c), EPERM);
  r.expect_errno("personality(READ_IMPLIES_EXEC)", personality(READ_IMPLIES_EXEC), EPERM);
  r.expect_errno("personality(ADDR_NO_RANDOMIZE)", personality(ADDR_NO_RANDOMIZE), EPERM);
  r.expect_errno("clone3", syscall(SYS_clone3, nullptr, 0), ENOSYS);
  r.expect_errno("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, nullptr), EPERM);
  r.expect_errno("setns", syscall(SYS_setns, 0, 0), EPERM);
  r.expect_errno("chroot", syscall(SYS_chroot, "/"), EPERM);
  r.expect_errno("bpf", syscall(SYS_bpf, 0, nullptr, 0), EPERM);
  r.expect_errno("perf_event_open", syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0), EPERM);
  r.expect_errno("userfaultfd", syscall(SYS_userfaultfd, 0), EPERM);
  r.expect_errno("io_uring_setup", syscall(SYS_io_uring_setup, 1, nullptr), EPERM);
  r.expect_errno("ptrace", syscall(SYS_ptrace, 0 /*PTRACE_TRACEME*/, 0, 0, 0), EPERM);
  r.expect_errno("mknod(S_IFCHR)", syscall(SYS_mknodat, AT_FDCWD, "/tmp/corral-nope", S_IFCHR | 0600, 0x103), EPERM);
  r.expect_errno("clock_settime", syscall(SYS_clock_settime, 0, nullptr), EPERM);
  r.expect_errno("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, nullptr, 0), EPERM);

  pid_t me = static_cast<pid_t>(syscall(SYS_getpid));
  if (me <= 1) r.fail("getpid", me, errno);
  r.expect_ok("personality(query)", personality(0xffffffff));
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  r.expect_ok("socket(AF_INET, SOCK_STREAM)", s);
  if (s >= 0) close(s);
  s = socket(AF_UNIX, SOCK_DGRAM, 0);
  r.expect_ok("socket(AF_UNIX)", s);
  if (s >= 0) close(s);
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  r.expect_ok("open", fd);
  char buf[64];
  if (fd >= 0) {
    r.expect_ok("read", read(fd, buf, sizeof(buf)));
    close(fd);
  }
  pthread_t t;
  void* ret = nullptr;
  int e = pthread_create(&t, nullptr, thread_fn, nullptr);  // clone3 -> ENOSYS -> clone
  if (e != 0) {
    r.fail("pthread_create", e, e);
  } else if (pthread_join(t, &ret) != 0 || ret != reinterpret_cast<void*>(42)) {
    r.fail("pthread_join", 0, 0);
  }
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    _exit(99);
  }
  if (child < 0) {
    r.fail("fork", child, errno);
  } else {
    int st = 0;
    waitpid(child, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) r.fail("fork + exec /bin/true", st, 0);
  }
}

TEST(SeccompKernel, DefaultFilterDeniesAndAllows) {
  auto prog = default_program();
  ASSERT_TRUE(prog);
  std::string report = run_confined(*prog, denied_and_allowed);
  EXPECT_EQ(report, "");
}

// The supervisor's side of "kill": a grandchild uses a foreign ABI, the notification arrives
// on the listener with that arch and number.
void foreign_abi(ChildReport& r, int lfd) {
  struct Case {
    const char* what;
    uint32_t arch;
    int nr;
    bool int80;
  };
  const Case cases[] = {{"x32 getpid", AUDIT_ARCH_X86_64, 39 | 0x40000000, false},
                        {"i386 getpid (int 0x80)", AUDIT_ARCH_I386, 20, true}};
  for (const Case& c : cases) {
    pid_t g = fork();
    if (g == 0) {
      if (c.int80) {
        long ret;
        asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
      } else {
        syscall(39 | 0x40000000);
      }
      _exit(0);  // reached only if the filter let it through
    }
    pollfd pfd{lfd, POLLIN, 0};
    int ready = poll(&pfd, 1, 5000);
    seccomp_notif n;
    std::memset(&n, 0, sizeof(n));
    if (ready == 1 && ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &n) == 0) {
      if (n.data.arch != c.arch || n.data.nr != c.nr) r.fail(c.what, n.data.nr, 0);
      if (static_cast<pid_t>(n.pid) != g) r.fail("notification pid", n.pid, 0);
      kill(g, SIGKILL);
      int st = 0;
      waitpid(g, &st, 0);
      if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) r.fail(c.what, st, 0);
    } else {
      kill(g, SIGKILL);
      int st = 0;
      waitpid(g, &st, 0);
      // Without IA32 emulation, int 0x80 faults before seccomp sees it: that is safe too.
      bool no_ia32 = c.int80 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
      if (!no_ia32) r.fail(c.what, ready, errno);
    }
  }
}

TEST(SeccompKernel, ForeignAbiIsReportedToTheListener) {
  auto prog = default_program();
  ASSERT_TRUE(prog);
  ASSERT_TRUE(prog->uses_notify);
  EXPECT_EQ(run_confined(*prog, foreign_abi), "");
}

// A real interpreter runs under the filter: threads, subprocess, sockets, temp files, mkfifo.
void python_under_filter(ChildReport& r, int lfd) {
  close(lfd);  // no supervisor here: a foreign-ABI syscall would get ENOSYS
  const char* code =
      "import os, socket, subprocess, tempfile, threading, json, hashlib, random, time, select\n"
      "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
      "assert subprocess.run(['/bin/true']).returncode == 0\n"
      "a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n"
      "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.close()\n"
      "d = tempfile.mkdtemp(); os.mkfifo(os.path.join(d, 'f')); open(os.path.join(d, 'g'), 'w').write('hi')\n"
      "assert os.cpu_count() >= 1 and len(os.urandom(8)) == 8\n"
      "print('ok')\n";
  int out[2];
  if (pipe(out) != 0) return r.fail("pipe", -1, errno);
  pid_t g = fork();
  if (g == 0) {
    dup2(out[1], 1);
    execl("/usr/bin/python3", "python3", "-I", "-c", code, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char buf[128] = {};
  ssize_t n = read(out[0], buf, sizeof(buf) - 1);
  int st = 0;
  waitpid(g, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n < 2 || std::strncmp(buf, "ok", 2) != 0) {
    r.fail("python3 under the default filter", st, 0);
  }
}

TEST(SeccompKernel, PythonRunsUnderDefaultFilter) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  auto prog = default_program();
  ASSERT_TRUE(prog);
  EXPECT_EQ(run_confined(*prog, python_under_filter), "");
}

#endif  // __x86_64__

}  // namespace
}  // namespace corral::seccomp
