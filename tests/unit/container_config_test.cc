// Policy -> container config translation (no engine needed): every field honoured, and the
// fields an engine cannot honour refused by name (fail closed). Also the seccomp translation
// and the exec stream demultiplexer.
#include <gtest/gtest.h>

#include "backends/common/http_client.h"
#include "backends/common/tar.h"
#include "backends/docker/container_config.h"
#include "backends/docker/exec_stream.h"
#include "backends/docker/seccomp_json.h"

namespace corral::docker {
namespace {

ContainerOptions options() {
  ContainerOptions o;
  o.image = "corral-test:latest";
  o.volume_name = "corral-x-work";
  o.seccomp_json = "{}";
  o.labels = {{"corral.sandbox", "1"}};
  return o;
}

Policy policy(const std::string& json) {
  auto p = Policy::from_json_text(json);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? *p : Policy{};
}

TEST(ContainerConfig, TranslatesLimits) {
  Policy p = policy(R"({"limits": {"memory_bytes": 134217728, "pids": 32, "cpu": 0.5, "open_files": 100,
                                   "file_size_bytes": 1048576, "disk_bytes": 67108864},
                       "hostname": "box", "env": {"A": "1"}})");
  auto j = container_create_body(p, options());
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  const auto& h = (*j)["HostConfig"];
  EXPECT_EQ(h["Memory"], 134217728);
  EXPECT_EQ(h["MemorySwap"], 134217728);
  EXPECT_EQ(h["PidsLimit"], 32);
  EXPECT_EQ(h["NanoCpus"], 500000000);
  EXPECT_EQ(h["NetworkMode"], "none");
  EXPECT_EQ(h["CapDrop"], nlohmann::json::array({"ALL"}));
  EXPECT_EQ(h["SecurityOpt"][0], "no-new-privileges");
  EXPECT_EQ(h["SecurityOpt"][1], "seccomp={}");
  EXPECT_EQ(h["ReadonlyRootfs"], true);
  EXPECT_EQ(h["Privileged"], false);
  EXPECT_EQ(h["Tmpfs"]["/tmp"], "rw,nosuid,nodev,exec,size=16777216,mode=1777");
  EXPECT_EQ(h["Mounts"][0]["Target"], "/sandbox");
  EXPECT_EQ(h["Mounts"][0]["Source"], "corral-x-work");
  bool nofile = false, fsize = false;
  for (const auto& u : h["Ulimits"]) {
    if (u["Name"] == "nofile") nofile = u["Soft"] == 100 && u["Hard"] == 100;
    if (u["Name"] == "fsize") fsize = u["Soft"] == 1048576;
  }
  EXPECT_TRUE(nofile && fsize) << h["Ulimits"].dump();
  EXPECT_EQ((*j)["Hostname"], "box");
  EXPECT_EQ((*j)["User"], kKeepaliveUser);
  EXPECT_EQ((*j)["Env"], nlohmann::json::array({"A=1"}));
  EXPECT_EQ((*j)["Labels"]["corral.sandbox"], "1");
  auto vol = workdir_volume_body(p, options());
  EXPECT_EQ(vol["DriverOpts"]["o"], "size=50331648,uid=1000,gid=1000,mode=0700,nosuid,nodev");
}

TEST(ContainerConfig, LoopbackIsNoneAndNoCpuCapByDefault) {
  auto j = container_create_body(Policy{}, options());
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["HostConfig"]["NetworkMode"], "none");
  EXPECT_FALSE((*j)["HostConfig"].contains("NanoCpus"));
}

TEST(ContainerConfig, PolicyUlimitsReplaceEngineOnes) {
  ContainerOptions o = options();
  o.ulimits = {{"nofile", 1024, 1024}, {"nproc", 4096, 4096}};
  o.runtime = "runc";
  o.workdir_volume = false;
  auto j = container_create_body(Policy{}, o);
  ASSERT_TRUE(j.ok());
  const auto& h = (*j)["HostConfig"];
  EXPECT_EQ(h["Runtime"], "runc");
  int seen = 0;
  for (const auto& u : h["Ulimits"]) {
    if (u["Name"] == "nofile") {
      EXPECT_EQ(u["Soft"], 256);
      ++seen;
    }
    if (u["Name"] == "nproc") {
      EXPECT_EQ(u["Soft"], 4096);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(h["Mounts"].empty());
  EXPECT_EQ(h["Tmpfs"]["/sandbox"], "rw,nosuid,nodev,exec,size=201326592");
}

TEST(ContainerConfig, RefusesWhatTheEngineCannotHonour) {
  auto cpu = container_create_body(policy(R"({"limits": {"cpu_ms": 500}})"), options());
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.status().field(), "limits.cpu_ms");
  EXPECT_EQ(cpu.status().code(), ErrorCode::kUnsupported);

  auto allow = container_create_body(policy(R"({"network": {"mode": "allowlist", "allow": ["a.b:443"]}})"), options());
  ASSERT_FALSE(allow.ok());
  EXPECT_EQ(allow.status().field(), "network.allow");
  ContainerOptions with_net = options();
  with_net.allowlist_network = "corral-egress";
  auto ok = container_create_body(policy(R"({"network": {"mode": "allowlist", "allow": ["a.b:443"]}})"), with_net);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["HostConfig"]["NetworkMode"], "corral-egress");

  auto mem = container_create_body(policy(R"({"limits": {"memory_bytes": 4194304}})"), options());
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().field(), "limits.memory_bytes");

  Policy rootfs;
  rootfs.rootfs = "python";
  auto r = container_create_body(rootfs, options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "rootfs");

  ContainerOptions no_seccomp = options();
  no_seccomp.seccomp_json.clear();
  auto s = container_create_body(Policy{}, no_seccomp);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().field(), "seccomp");

  ContainerOptions no_image = options();
  no_image.image.clear();
  EXPECT_EQ(container_create_body(Policy{}, no_image).status().field(), "image");
}

TEST(ContainerConfig, Mounts) {
  Policy p = policy(R"({"mounts": [{"type": "bind", "source": "/srv/data", "target": "/data", "readonly": true},
                                   {"type": "tmpfs", "target": "/scratch", "size_bytes": 1048576, "readonly": false}]})");
  auto j = container_create_body(p, options());
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  const auto& h = (*j)["HostConfig"];
  EXPECT_EQ(h["Mounts"][1]["Type"], "bind");
  EXPECT_EQ(h["Mounts"][1]["Source"], "/srv/data");
  EXPECT_EQ(h["Mounts"][1]["ReadOnly"], true);
  EXPECT_EQ(h["Tmpfs"]["/scratch"], "rw,nosuid,nodev,mode=1777,size=1048576");

  Policy over;
  over.mounts.push_back({MountSpec::Type::kTmpfs, "", "/sandbox", false, 1024});
  auto bad = container_create_body(over, options());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "mounts[0].target");
}

TEST(ContainerConfig, ExecEnv) {
  Policy p = policy(R"({"env": {"A": "1", "B": "2"}})");
  auto env = exec_env(p, {{"C", "3"}}, {{"B", "req"}});
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "B=req", "C=3", "HOME=/sandbox", "PATH=/usr/local/bin:/usr/bin:/bin"}));
}

TEST(SeccompJson, TranslatesCorralProfiles) {
  for (const char* name : {"default", "python", "javascript", "bash"}) {
    auto text = docker_seccomp_for(name);
    ASSERT_TRUE(text.ok()) << name << ": " << text.status().to_string();
    auto j = nlohmann::json::parse(*text);
    EXPECT_EQ(j["defaultAction"], "SCMP_ACT_ERRNO") << name;
    EXPECT_EQ(j["defaultErrnoRet"], 1) << name;
    EXPECT_EQ(j["architectures"].size(), 1u);
    bool read_allowed = false;
    for (const auto& r : j["syscalls"]) {
      for (const auto& n : r["names"]) {
        if (n == "read" && r["action"] == "SCMP_ACT_ALLOW" && r["args"].empty()) read_allowed = true;
      }
    }
    EXPECT_TRUE(read_allowed) << name;
  }
}

TEST(SeccompJson, ExceptionsBecomeAllowsForOtherValues) {
  auto p = seccomp::parse_profile(nlohmann::json::parse(R"({
    "name": "t", "default_action": "errno:EPERM",
    "rules": [{"names": ["ioctl"], "action": "allow"},
              {"names": ["ioctl"], "action": "errno:EPERM", "args": [{"index": 1, "op": "eq", "value": 21522}]},
              {"names": ["ptrace"], "action": "kill"}]})"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  auto j = seccomp_to_docker(*p);
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  int ioctl_rules = 0;
  bool ptrace_killed = false;
  for (const auto& r : (*j)["syscalls"]) {
    for (const auto& n : r["names"]) {
      if (n == "ioctl") {
        ++ioctl_rules;
        EXPECT_EQ(r["action"], "SCMP_ACT_ALLOW");
        ASSERT_EQ(r["args"].size(), 1u);
        EXPECT_EQ(r["args"][0]["op"], "SCMP_CMP_MASKED_EQ");
        // No allowed cube contains TIOCSTI (21522).
        uint64_t mask = r["args"][0]["value"], value = r["args"][0]["valueTwo"];
        EXPECT_NE(21522 & mask, value);
      }
      if (n == "ptrace") ptrace_killed = r["action"] == "SCMP_ACT_KILL_PROCESS";
    }
  }
  EXPECT_EQ(ioctl_rules, 64);  // one cube per bit of the excluded value
  EXPECT_TRUE(ptrace_killed);
}

TEST(ExecStream, DemultiplexesFramesSplitAnywhere) {
  std::string raw;
  auto frame = [&](char stream, const std::string& data) {
    raw += stream;
    raw += std::string("\0\0\0", 3);
    uint32_t n = static_cast<uint32_t>(data.size());
    raw += static_cast<char>(n >> 24);
    raw += static_cast<char>(n >> 16);
    raw += static_cast<char>(n >> 8);
    raw += static_cast<char>(n);
    raw += data;
  };
  frame(1, "hello ");
  frame(2, "err");
  frame(1, std::string(70000, 'z'));
  for (size_t step : {1u, 3u, 7u, 8u, 1000u, 100000u}) {
    FrameDemux d;
    std::string out, err;
    for (size_t i = 0; i < raw.size(); i += step) {
      ASSERT_TRUE(d.feed(std::string_view(raw).substr(i, step), [&](int s, std::string_view x) {
        (s == 2 ? err : out).append(x);
      }));
    }
    EXPECT_EQ(out, "hello " + std::string(70000, 'z')) << step;
    EXPECT_EQ(err, "err") << step;
  }
  FrameDemux bad;
  EXPECT_FALSE(bad.feed(std::string("\x07\0\0\0\0\0\0\1x", 9), [](int, std::string_view) {}));
}

TEST(ExecStream, OutputSinkCaps) {
  std::string data;
  bool truncated = false;
  std::string streamed;
  OutputSink sink{10, &data, &truncated, [&](std::string_view s) { streamed.append(s); }};
  EXPECT_TRUE(sink.add("12345"));
  EXPECT_FALSE(sink.add("6789012"));
  EXPECT_EQ(data, "1234567890");
  EXPECT_EQ(streamed, data);
  EXPECT_TRUE(truncated);
}

TEST(HttpEndpoint, Parses) {
  auto u = http::Endpoint::parse("unix:///var/run/docker.sock");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->unix_path, "/var/run/docker.sock");
  EXPECT_EQ(u->base_url, "http://localhost");
  auto t = http::Endpoint::parse("tcp://10.0.0.1:2375");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->base_url, "http://10.0.0.1:2375");
  EXPECT_TRUE(http::Endpoint::parse("https://h:2376/").ok());
  EXPECT_FALSE(http::Endpoint::parse("ftp://x").ok());
  EXPECT_FALSE(http::Endpoint::parse("unix://relative").ok());
  EXPECT_EQ(http::engine_message(R"({"message":"No such container: x"})"), "No such container: x");
  EXPECT_EQ(http::url_escape("a b/c"), "a%20b%2Fc");
}

TEST(Tar, RoundTripAndHostileNamesStayInMemory) {
  std::vector<tar::Entry> in(2);
  in[0].type = tar::Entry::Type::kDir;
  in[0].path = "d";
  in[1].path = "../../etc/evil";
  in[1].data = "x";
  auto t = tar::write(in);
  ASSERT_TRUE(t.ok());
  auto out = tar::read(*t, 100);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[1].path, "../../etc/evil");
  EXPECT_EQ((*out)[1].data, "x");
  auto capped = tar::read(*t, 0);
  EXPECT_FALSE(capped.ok());
}

}  // namespace
}  // namespace corral::docker
