#include "agent/observe/replay.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_replace.h"
#include "agent/observe/fake_demo.h"
#include "agent/observe/test_util.h"
#include "agent/scripted_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

ReplayReport MustReplay(const RunRecord& run, const PolicyFactory& factory = MakeRecordedPolicy) {
  absl::StatusOr<ReplayReport> r = Replay(run, factory);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : ReplayReport{};
}

class FixtureReplayTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FixtureReplayTest, EveryRecordedRunMatches) {
  TraceSet set = LoadTestdata(GetParam());
  ASSERT_FALSE(set.runs.empty());
  for (const RunRecord& run : set.runs) {
    ReplayReport r = MustReplay(run);
    EXPECT_TRUE(r.match()) << r.ToText();
    EXPECT_EQ(r.matched_steps, r.recorded_steps);
    EXPECT_EQ(r.results_served, r.recorded_steps);
    EXPECT_EQ(r.replayed_stop_reason, run.stop_reason());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureReplayTest,
                         ::testing::Values("good.jsonl", "loop.jsonl", "escape.jsonl",
                                           "two_runs.jsonl", "max_tool_calls.jsonl", "xss.jsonl",
                                           "tests_fail.jsonl"));

TEST(ReplayTest, MatchLine) {
  ReplayReport r = MustReplay(LoadTestdata("good.jsonl").runs[0]);
  EXPECT_EQ(r.ToText(),
            "replay 0123456789abcdef0123456789abcdef (scripted:good): match, 4/4 decisions, "
            "stop_reason done, 4 recorded results served, 0 tools run\n");
  EXPECT_EQ(r.ToJson()["match"], true);
}

TEST(ReplayTest, AFreshRecordingReplays) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/fresh.jsonl";
  FakeDemoOptions o;
  o.max_steps = 3;  // Stops with max_steps before finishing.
  ASSERT_TRUE(RecordFakeDemo(o, path).ok());
  TraceSet set;
  ASSERT_TRUE(ReadTraceFile(path, set).ok());
  ReplayReport r = MustReplay(set.runs[0]);
  EXPECT_TRUE(r.match()) << r.ToText();
  EXPECT_EQ(r.replayed_stop_reason, "max_steps");
}

TEST(ReplayTest, AKilledRunReplaysAsFarAsItGoes) {
  for (const char* file : {"killed.jsonl", "truncated.jsonl"}) {
    ReplayReport r = MustReplay(LoadTestdata(file).runs[0]);
    EXPECT_TRUE(r.match()) << file << ": " << r.ToText();
    EXPECT_FALSE(r.recording_complete);
    EXPECT_EQ(r.matched_steps, r.recorded_steps);
    EXPECT_THAT(r.ToText(), HasSubstr("recording has no run_end"));
  }
}

TEST(ReplayTest, ADifferentPolicyDivergesAtItsFirstDifferentDecision) {
  // Loop mode also reads calc.sh first, then reads it again where good mode patches.
  auto loop = [](const std::string&) -> absl::StatusOr<std::unique_ptr<Policy>> {
    return std::unique_ptr<Policy>(new ScriptedPolicy(ScriptMode::kLoop));
  };
  ReplayReport r = MustReplay(LoadTestdata("good.jsonl").runs[0], loop);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_EQ(r.divergence->kind, "decision");
  EXPECT_EQ(r.divergence->recorded["tool"], "patch.apply");
  EXPECT_EQ(r.divergence->replayed, json({{"tool", "fs.read"}, {"args", {{"path", "calc.sh"}}}}));
  EXPECT_EQ(r.matched_steps, 1);
  EXPECT_THAT(r.ToText(), HasSubstr("DIVERGED at step 2 (decision)\n  recorded: patch.apply {"));
  EXPECT_THAT(r.ToText(), HasSubstr("\n  replayed: fs.read {\"path\":\"calc.sh\"}\n"));
}

TEST(ReplayTest, AnEditedDecisionDiverges) {
  std::string text = absl::StrReplaceAll(ReadTestdata("good.jsonl"),
                                         {{"\"new\":\"echo $((a + b))\"", "\"new\":\"echo $((a * b))\""}});
  ReplayReport r = MustReplay(ParseText(text).runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_EQ(r.divergence->kind, "decision");
  EXPECT_EQ(r.divergence->recorded["args"]["new"], "echo $((a * b))");
  EXPECT_EQ(r.divergence->replayed["args"]["new"], "echo $((a + b))");
}

TEST(ReplayTest, AnEditedResultBreaksTheFingerprint) {
  // The policy's next decision does not depend on the byte count, but the recorded fingerprint does.
  std::string text = absl::StrReplaceAll(ReadTestdata("good.jsonl"), {{"\"bytes\":108", "\"bytes\":109"}});
  ReplayReport r = MustReplay(ParseText(text).runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 1);
  EXPECT_EQ(r.divergence->kind, "fingerprint");
}

TEST(ReplayTest, AChangedNoProgressWindowRunsPastTheRecordedStop) {
  // With a window of 5 the loop would not have stopped after 3 equal reads: the replay asks the
  // policy for a 4th decision where the recording stopped.
  std::string text = absl::StrReplaceAll(ReadTestdata("loop.jsonl"),
                                         {{"\"no_progress_window\":3", "\"no_progress_window\":5"}});
  ReplayReport r = MustReplay(ParseText(text).runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 4);
  EXPECT_EQ(r.divergence->recorded["stop_reason"], "no_progress");
  EXPECT_EQ(r.divergence->replayed["tool"], "fs.read");
}

TEST(ReplayTest, ADifferentRecordedStopDiverges) {
  std::string text = absl::StrReplaceAll(ReadTestdata("good.jsonl"),
                                         {{"\"stop_reason\":\"done\"", "\"stop_reason\":\"max_steps\""}});
  ReplayReport r = MustReplay(ParseText(text).runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->kind, "stop");
  EXPECT_EQ(r.divergence->recorded["stop_reason"], "max_steps");
  EXPECT_EQ(r.divergence->replayed["stop_reason"], "done");
}

TEST(ReplayTest, StepsPastTheRecordedEndAreNoMatch) {
  // The same run recorded twice into one file: the loop stops after 4 steps as the run_end says,
  // but 4 recorded steps were never compared.
  std::string good = ReadTestdata("good.jsonl");
  TraceSet set = ParseText(good + good);
  ASSERT_EQ(set.runs[0].steps.size(), 8u);
  EXPECT_THAT(set.warnings, ::testing::Contains(HasSubstr("has step 1 where step 5 was due")));
  ReplayReport r = MustReplay(set.runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 5);
  EXPECT_EQ(r.matched_steps, 4);
}

TEST(ReplayTest, APolicyThatGivesUpForAnotherReasonDiverges) {
  TraceSet set = LoadTestdata("tests_fail.jsonl");
  ASSERT_EQ(set.runs[0].stop_reason(), "error");
  EXPECT_TRUE(MustReplay(set.runs[0]).match());
  (*set.runs[0].end)["stop_detail"] = "policy: some other reason";
  ReplayReport r = MustReplay(set.runs[0]);
  ASSERT_FALSE(r.match());
  EXPECT_EQ(r.divergence->step, 4);
  EXPECT_EQ(r.divergence->recorded["stop_detail"], "policy: some other reason");
  EXPECT_THAT(r.divergence->replayed["policy_error"].get<std::string>(),
              HasSubstr("the tests still fail"));
}

// Records what the world looked like to the policy at its first decision, then plays good mode.
class WitnessPolicy : public Policy {
 public:
  explicit WitnessPolicy(std::vector<std::string>* files) : files_(files) {}
  absl::StatusOr<Action> Next(const State& state) override {
    if (state.session.messages.empty()) *files_ = state.world.files;
    return good_.Next(state);
  }
  std::string Name() const override { return "witness"; }

 private:
  std::vector<std::string>* files_;
  ScriptedPolicy good_{ScriptMode::kGood};
};

TEST(ReplayTest, StartsFromTheRecordedInitialState) {
  TraceSet set = LoadTestdata("good.jsonl");
  ASSERT_TRUE(set.runs[0].start->contains("state"));
  std::vector<std::string> files = {"not", "set"};
  auto factory = [&files](const std::string&) -> absl::StatusOr<std::unique_ptr<Policy>> {
    return std::unique_ptr<Policy>(new WitnessPolicy(&files));
  };
  EXPECT_TRUE(MustReplay(set.runs[0], factory).match());
  EXPECT_EQ(files, (std::vector<std::string>{"calc.sh", "test.sh"}));
}

TEST(ReplayTest, RefusesWhatItCannotReplay) {
  TraceSet set = LoadTestdata("good.jsonl");
  RunRecord run = set.runs[0];
  (*run.start)["policy"] = "model:gpt";
  absl::StatusOr<ReplayReport> r = Replay(run);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cannot replay policy 'model:gpt'"));
  run.start.reset();
  EXPECT_THAT(std::string(Replay(run).status().message()), HasSubstr("no run_start line"));
}

}  // namespace
}  // namespace agent::observe
