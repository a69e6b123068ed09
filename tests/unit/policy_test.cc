#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/core/policy.h"

namespace corral {
namespace {

Status parse_error(const std::string& text) {
  auto p = Policy::from_json_text(text);
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? Status::Ok() : p.status();
}

TEST(Policy, DefaultsWhenEmpty) {
  auto p = Policy::from_json_text("{}");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->limits.wall_ms, 30000u);
  EXPECT_EQ(p->network.mode, NetworkMode::kLoopback);
  EXPECT_EQ(p->seccomp, "default");
  EXPECT_EQ(p->workdir, "/sandbox");
}

TEST(Policy, ParsesEveryField) {
  auto p = Policy::from_json_text(R"({
    "limits": {"wall_ms": 5000, "cpu_ms": 2000, "cpu": 0.5, "memory_bytes": 134217728, "pids": 32,
               "output_bytes": 4096, "file_size_bytes": 1048576, "disk_bytes": 16777216, "open_files": 64},
    "network": {"mode": "none"},
    "mounts": [{"type": "bind", "source": "/opt/data", "target": "/data", "readonly": true},
               {"type": "tmpfs", "target": "/scratch", "size_bytes": 8388608}],
    "env": {"FOO": "bar"}, "env_passthrough": ["LANG"], "seccomp": "default",
    "hostname": "box-1", "language": "python", "rootfs": "host", "workdir": "/work"})");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->limits.pids, 32u);
  EXPECT_DOUBLE_EQ(p->limits.cpu, 0.5);
  EXPECT_EQ(p->network.mode, NetworkMode::kNone);
  ASSERT_EQ(p->mounts.size(), 2u);
  EXPECT_EQ(p->mounts[1].type, MountSpec::Type::kTmpfs);
  EXPECT_EQ(p->env.at("FOO"), "bar");
  EXPECT_EQ(p->hostname, "box-1");
  // Round trip through to_json gives the same policy.
  auto again = Policy::from_json(p->to_json());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->to_json(), p->to_json());
}

struct BadCase {
  const char* json;
  const char* field;
  const char* message_part;
};

class PolicyRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(PolicyRejects, NamesTheField) {
  Status s = parse_error(GetParam().json);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.field(), GetParam().field) << s.to_string();
  EXPECT_NE(s.message().find(GetParam().message_part), std::string::npos) << s.to_string();
}

INSTANTIATE_TEST_SUITE_P(
    All, PolicyRejects,
    ::testing::Values(
        BadCase{R"({"bogus": 1})", "bogus", "unknown field"},
        BadCase{R"({"limits": {"wall_ms": 5, "walltime": 3}})", "limits.walltime", "unknown field"},
        BadCase{R"({"limits": {"memory_bytes": -1}})", "limits.memory_bytes", "negative"},
        BadCase{R"({"limits": {"memory_bytes": "1G"}})", "limits.memory_bytes", "integer"},
        BadCase{R"({"limits": {"memory_bytes": 1.5}})", "limits.memory_bytes", "whole number"},
        BadCase{R"({"limits": {"memory_bytes": 1}})", "limits.memory_bytes", "at least"},
        BadCase{R"({"limits": {"memory_bytes": 99999999999999999}})", "limits.memory_bytes", "at most"},
        BadCase{R"({"limits": {"wall_ms": 0}})", "limits.wall_ms", "at least 1"},
        BadCase{R"({"limits": {"pids": 0}})", "limits.pids", "at least 1"},
        BadCase{R"({"limits": {"cpu": -0.5}})", "limits.cpu", "between"},
        BadCase{R"({"limits": {"cpu": 0.001}})", "limits.cpu", "0.01"},
        BadCase{R"({"limits": []})", "limits", "object"},
        BadCase{R"({"network": {"mode": "internet"}})", "network.mode", "none, loopback, allowlist"},
        BadCase{R"({"network": {"mode": "none", "allow": ["a:1"]}})", "network.allow", "allowlist"},
        BadCase{R"({"network": {"mode": "allowlist", "allow": ["example.org"]}})", "network.allow[0]", "host:port"},
        BadCase{R"({"network": {"mode": "allowlist", "allow": ["example.org:99999"]}})", "network.allow[0]", "port"},
        BadCase{R"({"mounts": [{"source": "/a", "target": "relative"}]})", "mounts[0].target", "absolute"},
        BadCase{R"({"mounts": [{"source": "/a", "target": "/x/../etc"}]})", "mounts[0].target", ".."},
        BadCase{R"({"mounts": [{"source": "/a", "target": "/proc/x"}]})", "mounts[0].target", "/proc"},
        BadCase{R"({"mounts": [{"target": "/x"}]})", "mounts[0].source", "required"},
        BadCase{R"({"mounts": [{"type": "nfs", "target": "/x"}]})", "mounts[0].type", "bind or tmpfs"},
        BadCase{R"({"mounts": [{"type": "tmpfs", "source": "/a", "target": "/x"}]})", "mounts[0].source", "tmpfs"},
        BadCase{R"({"env": {"1BAD": "x"}})", "env.1BAD", "variable name"},
        BadCase{R"({"env": {"A": 1}})", "env.A", "string"},
        BadCase{R"({"env_passthrough": ["OK", "no-dash"]})", "env_passthrough[1]", "variable name"},
        BadCase{R"({"hostname": "-bad"})", "hostname", "letters"},
        BadCase{R"({"hostname": 7})", "hostname", "string"},
        BadCase{R"({"workdir": "sandbox"})", "workdir", "absolute"},
        BadCase{R"({"seccomp": ""})", "seccomp", "profile"}));

TEST(Policy, MalformedJsonIsAnError) {
  Status s = parse_error("{\"limits\": ");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("not valid JSON"), std::string::npos);
}

TEST(Policy, TopLevelMustBeAnObject) {
  Status s = parse_error("[1,2]");
  EXPECT_NE(s.message().find("object"), std::string::npos);
}

TEST(Policy, UnreadableFileNamesThePath) {
  auto p = Policy::from_file("/nonexistent/policy.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().field(), "/nonexistent/policy.json");
  EXPECT_EQ(p.status().sys_errno(), ENOENT);
}

}  // namespace
}  // namespace corral
