#include "agent/observe/otel.h"

#include <cmath>
#include <set>

#include "absl/time/time.h"

#include "agent/observe/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace agent::observe {
namespace {

using nlohmann::json;

const json& Spans(const json& doc) { return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]; }

// The attribute's value object ({stringValue|intValue|boolValue: ...}), or null.
json Attr(const json& span, const std::string& key) {
  for (const json& a : span["attributes"]) {
    if (a["key"] == key) return a["value"];
  }
  return nullptr;
}

TEST(OtelTest, MatchesTheGoldenFile) {
  // testdata/good.otel.json was written by `trace otel good.jsonl`; see testdata/README.md.
  json got = ToOtlpJson(LoadTestdata("good.jsonl"));
  json want = json::parse(ReadTestdata("good.otel.json"));
  EXPECT_EQ(got, want) << got.dump(2);
}

TEST(OtelTest, IsDeterministicAndIdsAreWellFormed) {
  TraceSet set = LoadTestdata("two_runs.jsonl");
  json doc = ToOtlpJson(set);
  EXPECT_EQ(doc, ToOtlpJson(set));
  const json& spans = Spans(doc);
  ASSERT_EQ(spans.size(), 2u + 4u + 3u);
  std::set<std::string> span_ids, call_ids;
  for (const json& s : spans) {
    EXPECT_TRUE(RE2::FullMatch(s["traceId"].get<std::string>(), "[0-9a-f]{32}")) << s;
    EXPECT_TRUE(RE2::FullMatch(s["spanId"].get<std::string>(), "[0-9a-f]{16}")) << s;
    EXPECT_TRUE(span_ids.insert(s["spanId"].get<std::string>()).second);
    ASSERT_TRUE(s["startTimeUnixNano"].is_string());
    ASSERT_TRUE(s["endTimeUnixNano"].is_string());
    EXPECT_LE(std::stoll(s["startTimeUnixNano"].get<std::string>()),
              std::stoll(s["endTimeUnixNano"].get<std::string>()));
    EXPECT_EQ(s["kind"], 1);
    if (s["name"] != "invoke_agent") {
      EXPECT_EQ(s["parentSpanId"], OtelSpanId(Attr(s, "gen_ai.tool.call.id")["stringValue"]
                                                  .get<std::string>()
                                                  .substr(0, 32),
                                              0));
      EXPECT_TRUE(call_ids.insert(Attr(s, "gen_ai.tool.call.id")["stringValue"]).second);
    }
  }
  EXPECT_NE(spans[0]["traceId"], spans[5]["traceId"]);  // One trace per run.
}

TEST(OtelTest, GenAiSpansAndOurAttributes) {
  json doc = ToOtlpJson(LoadTestdata("two_runs.jsonl"));
  const json& spans = Spans(doc);
  const json& run = spans[0];
  EXPECT_EQ(run["name"], "invoke_agent");
  EXPECT_FALSE(run.contains("parentSpanId"));
  EXPECT_EQ(Attr(run, "gen_ai.operation.name")["stringValue"], "invoke_agent");
  EXPECT_EQ(Attr(run, "sandboxed_agent.stop_reason")["stringValue"], "done");
  EXPECT_EQ(Attr(run, "sandboxed_agent.budget.steps_left")["intValue"], "4");
  EXPECT_TRUE(Attr(run, "error.type").is_null());
  EXPECT_EQ(run["status"]["code"], 0);

  const json& step = spans[1];
  EXPECT_EQ(step["name"], "execute_tool fs.read");
  EXPECT_EQ(step["parentSpanId"], run["spanId"]);
  EXPECT_EQ(Attr(step, "gen_ai.operation.name")["stringValue"], "execute_tool");
  EXPECT_EQ(Attr(step, "gen_ai.tool.name")["stringValue"], "fs.read");
  EXPECT_EQ(Attr(step, "sandboxed_agent.budget.steps_left")["intValue"], "8");
  EXPECT_EQ(Attr(step, "sandboxed_agent.result.ok")["boolValue"], true);

  const json& escape_run = spans[5];
  EXPECT_EQ(Attr(escape_run, "error.type")["stringValue"], "no_progress");
  EXPECT_EQ(escape_run["status"]["code"], 2);
  const json& refused = spans[6];
  EXPECT_EQ(Attr(refused, "error.type")["stringValue"], "EPERM");
  EXPECT_EQ(Attr(refused, "sandboxed_agent.error.suggested_action")["stringValue"], "stop");
  EXPECT_EQ(Attr(refused, "sandboxed_agent.error.retryable")["boolValue"], false);
  EXPECT_TRUE(Attr(step, "sandboxed_agent.error.retryable").is_null());
  EXPECT_EQ(refused["status"]["code"], 2);
  EXPECT_FALSE(refused["status"]["message"].get<std::string>().empty());
}

TEST(OtelTest, StepTimesComeFromStartedAtAndDuration) {
  TraceSet set = LoadTestdata("good.jsonl");
  const StepRecord& first = set.runs[0].steps[0];
  ASSERT_FALSE(first.started_at.empty());
  absl::Time started;
  std::string err;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, first.started_at, &started, &err)) << err;
  const json doc = ToOtlpJson(set);
  const json& span = Spans(doc)[1];
  const int64_t start = std::stoll(span["startTimeUnixNano"].get<std::string>());
  const int64_t end = std::stoll(span["endTimeUnixNano"].get<std::string>());
  EXPECT_EQ(start, absl::ToUnixNanos(started));
  EXPECT_EQ(end - start, static_cast<int64_t>(std::llround(first.duration_ms * 1e6)));
}

// A hand-edited or foreign trace with fields of the wrong type: the attribute is left out, the
// export does not throw.
TEST(OtelTest, FieldsOfTheWrongTypeAreLeftOut) {
  TraceSet set;
  RunRecord run;
  run.run_id = "0123456789abcdef0123456789abcdef";
  StepRecord bad;
  bad.step = 1;
  bad.tool = "fs.read";
  bad.result = {{"ok", false},
                {"error", {{"code", "EPERM"}, {"message", "no"}, {"retryable", "yes"},
                           {"suggested_action", 7}}}};
  bad.state = {{"world_version", "three"}};
  run.steps.push_back(bad);
  StepRecord good = bad;
  good.step = 2;
  good.result["error"]["retryable"] = true;
  good.result["error"]["suggested_action"] = "retry";
  good.state = {{"world_version", 3}};
  run.steps.push_back(good);
  set.runs.push_back(run);
  json doc;
  ASSERT_NO_THROW(doc = ToOtlpJson(set));
  const json& spans = Spans(doc);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_TRUE(Attr(spans[1], "sandboxed_agent.error.retryable").is_null());
  EXPECT_TRUE(Attr(spans[1], "sandboxed_agent.error.suggested_action").is_null());
  EXPECT_TRUE(Attr(spans[1], "sandboxed_agent.world_version").is_null());
  EXPECT_EQ(Attr(spans[1], "error.type")["stringValue"], "EPERM");
  EXPECT_EQ(Attr(spans[2], "sandboxed_agent.error.retryable")["boolValue"], true);
  EXPECT_EQ(Attr(spans[2], "sandboxed_agent.error.suggested_action")["stringValue"], "retry");
  EXPECT_EQ(Attr(spans[2], "sandboxed_agent.world_version")["intValue"], "3");
}

// Traces from before run_start carried started_at: the run starts where its first step did (that
// step's observed_at less its duration), and never before the epoch.
TEST(OtelTest, WithoutStartedAtTheRunStartsWhereItsFirstStepDid) {
  auto run_start_of = [](const RunRecord& run) {
    TraceSet set;
    set.runs.push_back(run);
    return std::stoll(Spans(ToOtlpJson(set))[0]["startTimeUnixNano"].get<std::string>());
  };
  RunRecord run;
  run.run_id = "0123456789abcdef0123456789abcdef";
  StepRecord s;
  s.step = 1;
  s.tool = "fs.read";
  s.duration_ms = 250;
  s.result = {{"ok", true}, {"observed_at", "2026-01-01T00:00:01Z"}};
  run.steps.push_back(s);
  absl::Time observed;
  std::string err;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, "2026-01-01T00:00:01Z", &observed, &err)) << err;
  EXPECT_EQ(run_start_of(run), absl::ToUnixNanos(observed) - 250000000);
  run.steps[0].result.erase("observed_at");
  EXPECT_EQ(run_start_of(run), 0) << "no time at all: the epoch, not 250 ms before it";
  run.steps[0].duration_ms = 0;
  EXPECT_EQ(run_start_of(run), 0);
  run.steps.clear();
  EXPECT_EQ(run_start_of(run), 0);
}

TEST(OtelTest, ARunWithoutRunEnd) {
  json doc = ToOtlpJson(LoadTestdata("killed.jsonl"));
  const json& run = Spans(doc)[0];
  EXPECT_EQ(Attr(run, "sandboxed_agent.trace.complete")["boolValue"], false);
  EXPECT_TRUE(Attr(run, "sandboxed_agent.stop_reason").is_null());
  EXPECT_EQ(Spans(doc).size(), 3u);
}

}  // namespace
}  // namespace agent::observe
