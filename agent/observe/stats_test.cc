#include "agent/observe/stats.h"

#include <functional>
#include <string>

#include "agent/observe/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(PercentileTest, NearestRank) {
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);  // Unsorted on purpose.
  EXPECT_EQ(Percentile(v, 50), 10);
  EXPECT_EQ(Percentile(v, 95), 19);
  EXPECT_EQ(Percentile(v, 100), 20);
  EXPECT_EQ(Percentile({7}, 95), 7);
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({1, 2}, 50), 1);
}

TEST(StatsTest, TwoRunsInOneFile) {
  json s = ComputeStats(LoadTestdata("two_runs.jsonl"));
  EXPECT_EQ(s["runs"], 2);
  EXPECT_EQ(s["complete_runs"], 2);
  EXPECT_EQ(s["steps"], 7);
  EXPECT_DOUBLE_EQ(s["mean_steps"].get<double>(), 3.5);
  EXPECT_EQ(s["failed_steps"], 3);
  EXPECT_DOUBLE_EQ(s["error_rate"].get<double>(), 3.0 / 7.0);
  EXPECT_EQ(s["stop_reasons"], json({{"done", 1}, {"no_progress", 1}}));
  EXPECT_EQ(s["errors_by_code"], json({{"EPERM", 3}}));
  EXPECT_EQ(s["errors_by_tool"], json({{"fs.read", {{"EPERM", 3}}}}));
  ASSERT_EQ(s["tools"].size(), 4u);
  EXPECT_EQ(s["tools"][0]["tool"], "fs.read");  // Most calls first.
  EXPECT_EQ(s["tools"][0]["calls"], 4);
  EXPECT_EQ(s["tools"][0]["errors"], 3);
  // Every fake tool costs {"units": 1}; test.run also measures wall_ms 12.5 and cpu_ms 3.
  EXPECT_DOUBLE_EQ(s["cost_units"].get<double>(), 7);
  EXPECT_DOUBLE_EQ(s["cost_totals"]["wall_ms"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(s["cost_totals"]["cpu_ms"].get<double>(), 3);
  const json& good = s["run_details"][0];
  EXPECT_EQ(good["run_id"], "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(good["budget_curve"],
            json::parse(R"([{"step":1,"steps_left":8,"tools_left":8},
                            {"step":2,"steps_left":7,"tools_left":7},
                            {"step":3,"steps_left":6,"tools_left":6},
                            {"step":4,"steps_left":5,"tools_left":5}])"));
  EXPECT_EQ(s["run_details"][1]["failed_steps"], 3);
}

// One run of `calls` successful steps; step i (1-based) calls tool_of(i) and takes ms_of(i).
TraceSet OneRun(int calls, const std::function<std::string(int)>& tool_of,
                const std::function<double(int)>& ms_of) {
  RunRecord run;
  run.run_id = "r";
  for (int i = 1; i <= calls; ++i) {
    StepRecord s;
    s.step = i;
    s.tool = tool_of(i);
    s.duration_ms = ms_of(i);
    s.result = {{"ok", true}};
    run.steps.push_back(s);
  }
  TraceSet set;
  set.runs.push_back(run);
  return set;
}

TEST(StatsTest, DurationPercentilesPerTool) {
  json stats = ComputeStats(OneRun(
      20, [](int i) { return i % 2 == 0 ? "even" : "odd"; }, [](int i) { return i; }));
  for (const json& t : stats["tools"]) {
    if (t["tool"] == "even") {  // 2, 4, ..., 20.
      EXPECT_EQ(t["p50_ms"], 10);
      EXPECT_EQ(t["p95_ms"], 20);
      EXPECT_EQ(t["max_ms"], 20);
    } else {  // 1, 3, ..., 19.
      EXPECT_EQ(t["p50_ms"], 9);
      EXPECT_EQ(t["max_ms"], 19);
    }
  }
  // No cost field: each call counts one unit of tool quota.
  EXPECT_EQ(stats["cost_units"], 20);
  EXPECT_EQ(stats["stop_reasons"], json({{"(no run_end)", 1}}));
}

TEST(StatsTest, TruncatedLastLineIsReported) {
  json s = ComputeStats(LoadTestdata("truncated.jsonl"));
  EXPECT_EQ(s["runs"], 1);
  EXPECT_EQ(s["complete_runs"], 0);
  EXPECT_EQ(s["steps"], 4);
  ASSERT_EQ(s["warnings"].size(), 1u);
  std::string text = FormatStatsText(s);
  EXPECT_THAT(text, HasSubstr("warnings:\n  agent/observe/testdata/truncated.jsonl:6: truncated"));
  EXPECT_THAT(text, HasSubstr("no run_end"));
}

// The whole text, so a line dropped or reordered shows: tools by calls, ties in name order.
TEST(StatsTest, TextForm) {
  EXPECT_EQ(FormatStatsText(ComputeStats(LoadTestdata("two_runs.jsonl"))),
            "runs 2 (2 with run_end)\n"
            "steps 7, mean steps per run 3.50\n"
            "tool error rate 0.429 (3 of 7 steps failed)\n"
            "stop reasons: done 1, no_progress 1\n"
            "cost: units 7, cpu_ms 3, wall_ms 12.500\n"
            "\n"
            "tool              calls errors     p50_ms     p95_ms     max_ms\n"
            "fs.read               4      3      0.050      0.095      0.095\n"
            "patch.apply           1      0      0.059      0.059      0.059\n"
            "task.finish           1      0      0.052      0.052      0.052\n"
            "test.run              1      0      0.079      0.079      0.079\n"
            "\n"
            "errors by code: EPERM 3\n"
            "errors by tool:\n"
            "  fs.read: EPERM 3\n"
            "\n"
            "budget curve (step: steps_left/tools_left before the step)\n"
            "  run 0123456789abcdef0123456789abcdef (scripted:good, done, 4 steps): 1:8/8 2:7/7 3:6/6 "
            "4:5/5\n"
            "  run 2222222222222222bbbbbbbbbbbbbbbb (scripted:escape, no_progress, 3 steps): 1:8/8 "
            "2:7/7 3:6/6\n");
}

TEST(StatsTest, EmptySet) {
  json s = ComputeStats(TraceSet{});
  EXPECT_EQ(s["runs"], 0);
  EXPECT_EQ(s["error_rate"], 0.0);
  EXPECT_EQ(FormatStatsText(s),
            "runs 0 (0 with run_end)\n"
            "steps 0, mean steps per run 0.00\n"
            "tool error rate 0.000 (0 of 0 steps failed)\n"
            "stop reasons: none\n"
            "cost: units 0\n"
            "\n"
            "tool              calls errors     p50_ms     p95_ms     max_ms\n"
            "\n"
            "errors by code: none\n"
            "errors by tool: none\n"
            "\n"
            "budget curve (step: steps_left/tools_left before the step)\n");
}

// A hundred calls of one tool, 1 to 100 ms: the 50th, 95th and 100th by nearest rank.
TEST(StatsTest, PercentilesOfAHundredCalls) {
  const json t =
      ComputeStats(OneRun(100, [](int) { return "t"; }, [](int i) { return 101 - i; }))["tools"][0];
  EXPECT_EQ(t["p50_ms"], 50);
  EXPECT_EQ(t["p95_ms"], 95);
  EXPECT_EQ(t["max_ms"], 100);
  std::vector<double> v = {3, 1, 2};
  EXPECT_EQ(Percentile(v, 0), 1);  // Rank 0 is clamped to the smallest.
}

}  // namespace
}  // namespace agent::observe
