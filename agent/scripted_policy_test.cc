#include "agent/scripted_policy.h"

#include "agent/demo_project.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace agent {
namespace {

using nlohmann::json;

json Ok(json data) { return {{"ok", true}, {"data", std::move(data)}}; }

TEST(ScriptedPolicyTest, GoodModeReadsPatchesTestsAndFinishes) {
  ScriptedPolicy policy(ScriptMode::kGood);
  State state;
  auto a = policy.Next(state);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tool, "fs.read");
  EXPECT_EQ(a->args, json({{"path", kDemoSourcePath}}));
  state.AddToolResult(a->tool, a->args, Ok({{"content", kDemoSource}}));

  a = policy.Next(state);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tool, "patch.apply");
  EXPECT_EQ(a->args["old"], kDemoBuggyLine);
  EXPECT_EQ(a->args["new"], kDemoFixedLine);
  ++state.world.version;
  state.AddToolResult(a->tool, a->args, Ok(json::object()));

  a = policy.Next(state);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tool, "test.run");
  state.AddToolResult(a->tool, a->args, Ok({{"passed", true}}));

  a = policy.Next(state);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tool, "task.finish");
  EXPECT_FALSE(a->args.value("answer", "").empty());
}

TEST(ScriptedPolicyTest, GoodModeGivesUpWhenTestsStillFail) {
  ScriptedPolicy policy(ScriptMode::kGood);
  State state;
  state.AddToolResult("fs.read", {}, Ok({{"content", kDemoSource}}));
  ++state.world.version;
  state.AddToolResult("patch.apply", {}, Ok(json::object()));
  state.AddToolResult("test.run", {}, Ok({{"passed", false}}));
  auto a = policy.Next(state);
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(sandbox::CodeOf(a.status()), sandbox::ErrorCode::kEPRECONDITION);
}

TEST(ScriptedPolicyTest, GoodModeStopsOnARefusedRead) {
  ScriptedPolicy policy(ScriptMode::kGood);
  State state;
  state.AddToolResult("fs.read", {}, {{"ok", false}, {"error", {{"message", "denied"}}}});
  EXPECT_FALSE(policy.Next(state).ok());
}

TEST(ScriptedPolicyTest, LoopAndEscapeRepeatOneAction) {
  State state;
  ScriptedPolicy loop(ScriptMode::kLoop), escape(ScriptMode::kEscape);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(loop.Next(state)->args, json({{"path", kDemoSourcePath}}));
    EXPECT_EQ(escape.Next(state)->args, json({{"path", "../secret.txt"}}));
    state.AddToolResult("fs.read", {}, Ok(json::object()));
  }
}

TEST(ScriptedPolicyTest, ParseMode) {
  EXPECT_EQ(*ParseScriptMode("escape"), ScriptMode::kEscape);
  EXPECT_FALSE(ParseScriptMode("evil").ok());
}

}  // namespace
}  // namespace agent
