#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/core/exec_result.h"

namespace corral {
namespace {

TEST(ExecResult, FirstStatusWins) {
  ExecResult r;
  EXPECT_FALSE(r.has_status());
  EXPECT_TRUE(r.set_status(ExecStatus::kOutputLimit, "stdout over cap"));
  EXPECT_FALSE(r.set_status(ExecStatus::kTimeout, "later"));
  EXPECT_EQ(r.status(), ExecStatus::kOutputLimit);
  EXPECT_EQ(r.message, "stdout over cap");
}

TEST(ExecResult, JsonRoundTrip) {
  ExecResult r;
  r.set_status(ExecStatus::kNonzeroExit);
  r.exit_code = 3;
  r.stdout_data = "hello\n";
  r.stderr_data = "oops";
  r.stderr_truncated = true;
  r.usage.wall_ms = 12.5;
  r.usage.cpu_user_ms = 3;
  r.usage.peak_memory_bytes = 1 << 20;
  r.artifacts.push_back({"/sandbox/out/a.png", "a.png", "image/png", 4, std::string("\x89PNG", 4), false, 640, 480});
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["status"], "nonzero_exit");
  EXPECT_EQ(j["artifacts"][0]["bytes"], "iVBORw==");
  auto back = ExecResult::from_json(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->status(), ExecStatus::kNonzeroExit);
  EXPECT_EQ(back->exit_code, 3);
  EXPECT_EQ(back->stdout_data, "hello\n");
  EXPECT_TRUE(back->stderr_truncated);
  EXPECT_DOUBLE_EQ(back->usage.wall_ms, 12.5);
  ASSERT_EQ(back->artifacts.size(), 1u);
  EXPECT_EQ(back->artifacts[0].bytes, std::string("\x89PNG", 4));
  EXPECT_EQ(back->artifacts[0].width, 640u);
  EXPECT_EQ(back->artifacts[0].name, "a.png");
  EXPECT_EQ(back->to_json(), j);
}

TEST(ExecResult, ValueOnlyWhenThereIsOne) {
  ExecResult r;
  r.set_status(ExecStatus::kOk);
  EXPECT_FALSE(r.to_json().contains("value"));
  auto none = ExecResult::from_json(r.to_json());
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_FALSE(none->value.has_value());
  r.value = "{'a': [1, 2]}";
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["value"], "{'a': [1, 2]}");
  auto back = ExecResult::from_json(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->value, r.value);
  EXPECT_EQ(back->to_json(), j);
  r.value = "";  // an empty repr is still a value
  EXPECT_EQ(ExecResult::from_json(r.to_json())->value, std::optional<std::string>(""));
  j["value"] = 3;
  EXPECT_FALSE(ExecResult::from_json(j).ok());
}

TEST(ExecResult, InvalidUtf8OutputStillSerialises) {
  ExecResult r;
  r.set_status(ExecStatus::kOk);
  r.stdout_data = std::string("ok \xff\xfe end");
  std::string text = r.to_json().dump();
  EXPECT_NE(text.find("ok "), std::string::npos);
  EXPECT_NE(text.find(" end"), std::string::npos);
}

TEST(ExecResult, EveryStatusHasAName) {
  for (int i = 0; i <= static_cast<int>(ExecStatus::kInternalError); ++i) {
    auto s = static_cast<ExecStatus>(i);
    auto back = exec_status_from_name(exec_status_name(s));
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(*back, s);
  }
  EXPECT_FALSE(exec_status_from_name("exploded").has_value());
}

TEST(ExecResult, FromJsonRejectsUnknownStatusAndFields) {
  EXPECT_FALSE(ExecResult::from_json({{"status", "exploded"}}).ok());
  auto r = ExecResult::from_json({{"status", "ok"}, {"surprise", 1}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "surprise");
}

TEST(Base64, KnownVectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(*base64_decode("Zm9vYmE="), "fooba");
  EXPECT_FALSE(base64_decode("Zm9").ok());
  EXPECT_FALSE(base64_decode("Zm9!").ok());
  EXPECT_FALSE(base64_decode("Z=9v").ok());
}

}  // namespace
}  // namespace corral
