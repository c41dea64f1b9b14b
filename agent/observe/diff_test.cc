#include "agent/observe/diff.h"

#include <cstdlib>

#include "agent/observe/fake_demo.h"
#include "agent/observe/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

RunRecord RunOf(const char* file) { return LoadTestdata(file).runs[0]; }

RunRecord Record(const FakeDemoOptions& options, const std::string& name) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  EXPECT_TRUE(RecordFakeDemo(options, path).ok());
  TraceSet set;
  EXPECT_TRUE(ReadTraceFile(path, set).ok());
  return set.runs.at(0);
}

TEST(DiffTest, ARunEqualsItself) {
  DiffReport d = DiffRuns(RunOf("good.jsonl"), RunOf("good.jsonl"));
  EXPECT_TRUE(d.identical());
  EXPECT_EQ(d.same_steps, 4);
  EXPECT_THAT(d.ToText(), HasSubstr("identical: 4 steps"));
}

TEST(DiffTest, TimingsAreNotDifferences) {
  // Two fresh recordings of the same run: durations and start/end times differ, nothing else.
  FakeDemoOptions o;
  DiffReport d = DiffRuns(Record(o, "a.jsonl"), Record(o, "b.jsonl"));
  EXPECT_TRUE(d.identical()) << d.ToText();
}

TEST(DiffTest, ADifferentDecisionFromStepOne) {
  DiffReport d = DiffRuns(RunOf("good.jsonl"), RunOf("escape.jsonl"));
  EXPECT_FALSE(d.identical());
  ASSERT_EQ(d.differences.size(), 4u);
  EXPECT_EQ(d.differences[0].step, 1);
  EXPECT_EQ(d.differences[0].kind, "decision");
  EXPECT_EQ(d.differences[3].kind, "missing");
  EXPECT_TRUE(d.differences[3].b.is_null());
  std::string text = d.ToText();
  EXPECT_THAT(text, HasSubstr("first divergence: step 1 (decision)\n  a: fs.read {\"path\":\"calc.sh\"}\n"
                              "  b: fs.read {\"path\":\"../secret.txt\"}\n"));
  EXPECT_THAT(text, HasSubstr("rest: 0 steps the same, 3 more differing; decision at 2,3; missing at 4\n"
                              "end differs: a done after 4 steps, 4 tool calls; b no_progress after 3"));
}

TEST(DiffTest, ADifferentObservation) {
  // xss.jsonl's test.run prints an extra line; decisions stay the same.
  DiffReport d = DiffRuns(RunOf("good.jsonl"), RunOf("xss.jsonl"));
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(d.differences[0].step, 3);
  EXPECT_EQ(d.differences[0].kind, "result");
  EXPECT_TRUE(d.differences[0].a.contains("data"));
  EXPECT_FALSE(d.differences[0].a.contains("ok"));  // Only the keys that differ.
  EXPECT_TRUE(d.differences[0].b.contains("data"));
  EXPECT_FALSE(d.differences[0].b.contains("ok"));  // On both sides.
  EXPECT_NE(d.differences[0].a["data"], d.differences[0].b["data"]);
  EXPECT_EQ(d.same_steps, 3);
  DiffReport back = DiffRuns(RunOf("xss.jsonl"), RunOf("good.jsonl"));
  ASSERT_EQ(back.differences.size(), 1u);
  EXPECT_EQ(back.differences[0].a, d.differences[0].b) << "the sides swap with the arguments";
  EXPECT_EQ(back.differences[0].b, d.differences[0].a);
}

TEST(DiffTest, TheSameStepsAndADifferentEnd) {
  RunRecord a = RunOf("good.jsonl");
  RunRecord b = a;
  ASSERT_TRUE(b.end.has_value());
  (*b.end)["stop_reason"] = "max_steps";
  DiffReport d = DiffRuns(a, b);
  EXPECT_FALSE(d.identical());
  EXPECT_TRUE(d.differences.empty());
  EXPECT_THAT(d.ToText(), HasSubstr("\nall 4 steps the same\nend differs: a done after 4 steps"));
}

TEST(DiffTest, ADifferentBudget) {
  FakeDemoOptions o;
  o.max_steps = 9;
  DiffReport d = DiffRuns(RunOf("good.jsonl"), Record(o, "nine.jsonl"));
  ASSERT_FALSE(d.differences.empty());
  EXPECT_EQ(d.differences[0].kind, "budget");
  EXPECT_EQ(d.differences[0].a, json({{"steps_left", 8}, {"tools_left", 8}}));
  EXPECT_EQ(d.differences[0].b, json({{"steps_left", 9}, {"tools_left", 8}}));
}

TEST(DiffTest, AShorterRun) {
  DiffReport d = DiffRuns(RunOf("good.jsonl"), RunOf("killed.jsonl"));
  ASSERT_EQ(d.differences.size(), 2u);
  EXPECT_EQ(d.differences[0].step, 3);
  EXPECT_EQ(d.differences[0].kind, "missing");
  EXPECT_FALSE(d.end_b.has_value());
  json j = d.ToJson();
  EXPECT_EQ(j["identical"], false);
  EXPECT_EQ(j["first_divergence"]["step"], 3);
  EXPECT_TRUE(j["end_b"].is_null());
  EXPECT_THAT(d.ToText(), HasSubstr("b: run 0123456789abcdef0123456789abcdef, 2 steps, no run_end"));
}

TEST(DiffTest, AShorterFirstRun) {
  DiffReport d = DiffRuns(RunOf("killed.jsonl"), RunOf("good.jsonl"));
  ASSERT_EQ(d.differences.size(), 2u);
  EXPECT_EQ(d.differences[0].step, 3);
  EXPECT_EQ(d.differences[0].kind, "missing");
  EXPECT_TRUE(d.differences[0].a.is_null());
  EXPECT_FALSE(d.differences[0].b.is_null());
  EXPECT_EQ(d.differences[1].step, 4);
}

}  // namespace
}  // namespace agent::observe
