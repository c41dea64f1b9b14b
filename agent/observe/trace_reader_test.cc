#include "agent/observe/trace_reader.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/observe/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

using ::testing::HasSubstr;

TEST(TraceReaderTest, ReadsARecordedRun) {
  TraceSet set = LoadTestdata("good.jsonl");
  ASSERT_EQ(set.runs.size(), 1u);
  const RunRecord& run = set.runs[0];
  EXPECT_EQ(run.run_id, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(run.policy(), "scripted:good");
  EXPECT_EQ(run.stop_reason(), "done");
  ASSERT_EQ(run.steps.size(), 4u);
  EXPECT_EQ(run.steps[0].tool, "fs.read");
  EXPECT_EQ(run.steps[0].source, "agent/observe/testdata/good.jsonl:2");
  EXPECT_EQ(run.steps[3].tool, "task.finish");
  EXPECT_EQ(run.steps[1].steps_left, 7);
  EXPECT_TRUE(run.steps[0].ok());
  EXPECT_EQ(set.lines, 6);
  EXPECT_TRUE(set.warnings.empty());
}

TEST(TraceReaderTest, GroupsSeveralRunsByRunId) {
  TraceSet set = LoadTestdata("two_runs.jsonl");
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].steps.size(), 4u);
  EXPECT_EQ(set.runs[1].steps.size(), 3u);
  EXPECT_EQ(set.runs[1].steps[0].error_code(), "EPERM");
  EXPECT_NE(set.Find("2222222222222222bbbbbbbbbbbbbbbb"), nullptr);
  EXPECT_EQ(set.Find("nope"), nullptr);
}

TEST(TraceReaderTest, InterleavedRunsStillGroup) {
  // Two runs writing into one file line by line.
  std::string good = ReadTestdata("good.jsonl");
  std::string escape = ReadTestdata("escape.jsonl");
  std::vector<std::string> g = absl::StrSplit(good, '\n', absl::SkipEmpty());
  std::vector<std::string> e = absl::StrSplit(escape, '\n', absl::SkipEmpty());
  std::string mixed;
  for (size_t i = 0; i < std::max(g.size(), e.size()); ++i) {
    if (i < g.size()) mixed += g[i] + "\n";
    if (i < e.size()) mixed += e[i] + "\n";
  }
  TraceSet set = ParseText(mixed);
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].steps.size(), 4u);
  EXPECT_EQ(set.runs[1].steps.size(), 3u);
  EXPECT_TRUE(set.runs[0].end.has_value());
}

TEST(TraceReaderTest, TruncatedLastLineIsAWarningNotAnError) {
  TraceSet set = LoadTestdata("truncated.jsonl");
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].steps.size(), 4u);
  EXPECT_FALSE(set.runs[0].end.has_value());
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_THAT(set.warnings[0], HasSubstr("truncated.jsonl:6: truncated last line"));
  EXPECT_EQ(set.lines, 5);
}

TEST(TraceReaderTest, AnUnterminatedButCompleteLastLineIsKept) {
  std::string good = ReadTestdata("good.jsonl");
  good.pop_back();  // The final newline.
  TraceSet set = ParseText(good);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_TRUE(set.runs[0].end.has_value());
  EXPECT_TRUE(set.warnings.empty());
}

struct BadCase {
  const char* file;
  const char* expected;
};

class BadTraceTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadTraceTest, NamesTheLineAndTheProblem) {
  TraceSet set;
  absl::Status s = ReadTraceFile(TestdataPath(GetParam().file), set);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadTraceTest,
    ::testing::Values(
        BadCase{"not_json.jsonl", "not_json.jsonl:3: not JSON (parse error at byte"},
        BadCase{"bad_version.jsonl",
                "bad_version.jsonl:2: trace_version 2 is not supported; this reader knows 1"},
        BadCase{"missing_field.jsonl",
                "missing_field.jsonl:3: step line lacks the field 'budget_before.steps_left'"}));

TEST(TraceReaderTest, RejectsLinesThatAreNotTraceLines) {
  struct Case {
    std::string text;
    std::string expected;
  } cases[] = {
      {"[1,2]\n", "inline:1: a trace line is a JSON object, this one is array"},
      {"{\"a\":1}\n", "inline:1: no 'trace_version' field"},
      {"{\"trace_version\":\"1\",\"type\":\"step\",\"run_id\":\"r\"}\n",
       "inline:1: trace_version \"1\" is not supported"},
      {"{\"trace_version\":1,\"type\":\"bogus\",\"run_id\":\"r\"}\n",
       "inline:1: unknown line type 'bogus'"},
      {"{\"trace_version\":1,\"type\":\"run_end\"}\n", "inline:1: no non-empty string 'run_id'"},
      {"{\"trace_version\":1,\"type\":3,\"run_id\":\"r\"}\n", "inline:1: no string 'type' field"},
      {"{\"trace_version\":1,\"type\":\"run_end\",\"run_id\":\"r\",\"stop_reason\":\"done\","
       "\"steps\":\"4\",\"tool_calls\":4}\n",
       "inline:1: run_end line: 'steps' must be an integer, not string"},
      {"\n\n{\"trace_version\":1,\"type\":\"run_start\",\"run_id\":\"r\"}\n",
       "inline:3: run_start line lacks the field 'policy'"},
      {"{\"trace_version\":1,\"type\":\"step\",\"run_id\":\"r\",\"step\":1,"
       "\"decision\":{\"tool\":\"t\",\"args\":{}},\"result\":{\"ok\":false},\"duration_ms\":1,"
       "\"budget_before\":{\"steps_left\":1,\"tools_left\":1},\"state\":{}}\n",
       "inline:1: step line: a failed result (ok false) lacks the string 'result.error.code'"},
  };
  for (const Case& c : cases) {
    TraceSet set;
    absl::Status s = ParseTrace("inline", c.text, set);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expected)) << c.text;
  }
}

// Only the last line of a file without a final newline can be a killed writer's partial line: a
// broken line before it is an error even then.
TEST(TraceReaderTest, ABrokenMiddleLineIsAnErrorWithOrWithoutAFinalNewline) {
  std::vector<std::string> lines = absl::StrSplit(ReadTestdata("good.jsonl"), '\n', absl::SkipEmpty());
  lines.insert(lines.begin() + 2, "{\"trace_version\":1,");
  for (const char* end : {"\n", ""}) {
    TraceSet set;
    absl::Status s = ParseTrace("inline", absl::StrJoin(lines, "\n") + end, set);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "ending '" << end << "'";
    EXPECT_THAT(std::string(s.message()), HasSubstr("inline:3: not JSON")) << s;
  }
}

TEST(TraceReaderTest, AStepAfterTheRunEndIsAWarning) {
  std::vector<std::string> lines = absl::StrSplit(ReadTestdata("good.jsonl"), '\n', absl::SkipEmpty());
  std::string step = lines[lines.size() - 2];  // The last step line.
  lines.push_back(step);
  TraceSet set = ParseText(absl::StrJoin(lines, "\n") + "\n");
  ASSERT_FALSE(set.warnings.empty());
  EXPECT_THAT(absl::StrJoin(set.warnings, "\n"), HasSubstr("step line after the run_end of run"));
}

TEST(TraceReaderTest, FieldsOfTheWrongTypeReadAsAbsent) {
  StepRecord s;
  s.result = {{"ok", false}, {"error", "EPERM"}};  // Not an object: no code to read.
  EXPECT_EQ(s.error_code(), "");
  s.result = {{"ok", false}, {"error", {{"code", "EPERM"}}}};
  EXPECT_EQ(s.error_code(), "EPERM");
  std::vector<std::string> lines = absl::StrSplit(ReadTestdata("good.jsonl"), '\n', absl::SkipEmpty());
  nlohmann::json step = nlohmann::json::parse(lines[1]);
  step["started_at"] = 12;
  lines[1] = step.dump();
  TraceSet set = ParseText(absl::StrJoin(lines, "\n") + "\n");
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].steps[0].started_at, "");
  EXPECT_FALSE(set.runs[0].steps[1].started_at.empty());
}

TEST(TraceReaderTest, AMissingFileNamesThePath) {
  TraceSet set;
  absl::Status s = ReadTraceFile("/nonexistent/trace.jsonl", set);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent/trace.jsonl"));
}

TEST(TraceReaderTest, SelectRunNeedsAnIdWhenThereAreSeveral) {
  TraceSet set = LoadTestdata("two_runs.jsonl");
  absl::StatusOr<const RunRecord*> none = SelectRun(set, "");
  EXPECT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()),
              HasSubstr("0123456789abcdef0123456789abcdef, 2222222222222222bbbbbbbbbbbbbbbb"));
  absl::StatusOr<const RunRecord*> one = SelectRun(set, "2222222222222222bbbbbbbbbbbbbbbb");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)->policy(), "scripted:escape");
  EXPECT_FALSE(SelectRun(set, "missing").ok());
  EXPECT_FALSE(SelectRun(TraceSet{}, "").ok());
}

}  // namespace
}  // namespace agent::observe
