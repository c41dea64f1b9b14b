#include "agent/loop.h"

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace agent {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Plays a fixed list of actions, then repeats the last one; records how often it was asked.
class ListPolicy : public Policy {
 public:
  explicit ListPolicy(std::vector<Action> actions) : actions_(std::move(actions)) {}
  absl::StatusOr<Action> Next(const State&) override {
    ++calls;
    if (fail_at == calls) return sandbox::MakeError(sandbox::ErrorCode::kEINTERNAL, "no model");
    size_t i = std::min(static_cast<size_t>(calls - 1), actions_.size() - 1);
    return actions_[i];
  }
  std::string Name() const override { return "list"; }
  int calls = 0;
  int fail_at = -1;

 private:
  std::vector<Action> actions_;
};

// Fake tools: t.echo returns its args; t.write bumps the world version; t.finish ends the task;
// t.fail always fails. handler_calls counts every handler run.
class LoopTest : public ::testing::Test {
 protected:
  LoopTest() : registry_(ToolEnv{}, {"s"}) {
    auto add = [&](const std::string& name, ToolHandler h) {
      ToolSpec spec;
      spec.name = name;
      spec.auth_scope = "s";
      spec.handler = [this, h](ToolContext& ctx, const json& args) {
        ++handler_calls_;
        return h(ctx, args);
      };
      EXPECT_TRUE(registry_.Register(std::move(spec)).ok());
    };
    add("t.echo", [](ToolContext&, const json& args) -> absl::StatusOr<ToolOutput> {
      return ToolOutput{args, {}, {}};
    });
    add("t.write", [](ToolContext& ctx, const json&) -> absl::StatusOr<ToolOutput> {
      ++ctx.state.world.version;
      return ToolOutput{};
    });
    add("t.finish", [](ToolContext& ctx, const json&) -> absl::StatusOr<ToolOutput> {
      ctx.state.task.done = true;
      ctx.state.task.answer = "42";
      return ToolOutput{};
    });
    add("t.fail", [](ToolContext&, const json&) -> absl::StatusOr<ToolOutput> {
      return sandbox::MakeError(sandbox::ErrorCode::kEPERM, "no");
    });
    // The clock moves on every call, so observed_at differs between otherwise equal results.
    registry_.set_clock([this] { return absl::FromUnixMillis(1000 * ++ticks_); });
    state_.control.max_steps = 10;
    state_.control.max_tool_calls = 10;
    trace_path_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl";
  }

  RunSummary Run(ListPolicy& policy) {
    auto trace = TraceWriter::Open(trace_path_, /*truncate=*/true);
    EXPECT_TRUE(trace.ok());
    LoopOptions options;
    options.run_id = "run-1";
    return RunLoop(registry_, policy, state_, &*trace, options);
  }

  std::vector<json> TraceLines() {
    std::ifstream in(trace_path_);
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  Registry registry_;
  State state_;
  int handler_calls_ = 0;
  int64_t ticks_ = 0;
  std::string trace_path_;
};

Action Echo(int i) { return Action{"t.echo", {{"i", i}}}; }

TEST_F(LoopTest, DoneStopsAfterFinish) {
  ListPolicy policy({Echo(1), Action{"t.finish", {}}});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kDone);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.tool_calls, 2);
  EXPECT_EQ(s.trace_steps, 2);
  EXPECT_EQ(s.answer, "42");
  EXPECT_EQ(s.ToJson(), json::parse(R"({"answer": "42", "steps": 2, "stop_reason": "done",
                                        "tool_calls": 2, "trace_steps": 2})"));
}

TEST_F(LoopTest, StepBudgetIsSpentBeforeThePolicyIsAsked) {
  state_.control.max_steps = 2;
  ListPolicy policy({Echo(1), Echo(2), Echo(3)});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(policy.calls, 2);  // No third decision was asked for.
  EXPECT_EQ(handler_calls_, 2);
}

TEST_F(LoopTest, ZeroStepBudgetRunsNothing) {
  state_.control.max_steps = 0;
  ListPolicy policy({Echo(1)});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(policy.calls, 0);
  EXPECT_EQ(handler_calls_, 0);
}

TEST_F(LoopTest, ToolBudgetIsSpentBeforeTheRegistryCall) {
  state_.control.max_tool_calls = 1;
  ListPolicy policy({Echo(1), Echo(2)});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxToolCalls);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.tool_calls, 1);
  EXPECT_EQ(handler_calls_, 1);
  std::vector<json> lines = TraceLines();
  ASSERT_EQ(lines.size(), 3u);  // run_start, one step, run_end.
  EXPECT_EQ(lines.back()["stop_reason"], "max_tool_calls");
  EXPECT_EQ(lines.back()["pending_decision"], json({{"tool", "t.echo"}, {"args", {{"i", 2}}}}));
}

TEST_F(LoopTest, ThreeEqualFingerprintsStopWithNoProgress) {
  ListPolicy policy({Echo(7)});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.trace_steps, 3);
}

TEST_F(LoopTest, RepeatedFailuresAreNoProgressToo) {
  ListPolicy policy({Action{"t.fail", {}}});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  EXPECT_EQ(s.steps, 3);
}

TEST_F(LoopTest, AChangingWorldIsProgress) {
  state_.control.max_steps = 5;
  ListPolicy policy({Action{"t.write", {}}});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(s.steps, 5);
}

TEST_F(LoopTest, ARepeatBrokenByAnotherActionRestartsTheCount) {
  state_.control.max_steps = 6;
  ListPolicy policy({Echo(1), Echo(1), Echo(2), Echo(1), Echo(1), Echo(1)});
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  EXPECT_EQ(s.steps, 6);
}

TEST_F(LoopTest, PolicyErrorStopsWithError) {
  ListPolicy policy({Echo(1), Echo(2)});
  policy.fail_at = 2;
  RunSummary s = Run(policy);
  EXPECT_EQ(s.stop_reason, StopReason::kError);
  EXPECT_THAT(s.stop_detail, HasSubstr("no model"));
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.tool_calls, 1);
  EXPECT_EQ(TraceLines().back()["stop_detail"], s.stop_detail);
}

TEST_F(LoopTest, FailuresGoIntoTheSession) {
  state_.control.max_steps = 1;
  ListPolicy policy({Action{"t.fail", {}}});
  Run(policy);
  ASSERT_EQ(state_.session.messages.size(), 1u);
  EXPECT_EQ(state_.session.messages[0].result["error"]["code"], "EPERM");
}

TEST_F(LoopTest, TraceLineIsWrittenAfterTheStateUpdate) {
  state_.control.max_steps = 2;
  ListPolicy policy({Action{"t.write", {}}, Action{"t.fail", {}}});
  Run(policy);
  std::vector<json> lines = TraceLines();
  ASSERT_EQ(lines.size(), 4u);
  // The step that wrote shows the bumped version and itself in the session.
  EXPECT_EQ(lines[1]["state"]["world_version"], 1);
  EXPECT_EQ(lines[1]["state"]["messages"], 1);
  EXPECT_EQ(lines[2]["result"]["error"]["code"], "EPERM");
  EXPECT_EQ(lines[2]["state"]["messages"], 2);
}

TEST_F(LoopTest, TraceHasHeaderStepsAndFooterWithRunIdAndVersion) {
  state_.control.max_steps = 2;
  ListPolicy policy({Echo(1), Echo(2)});
  Run(policy);
  std::vector<json> lines = TraceLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines.front()["type"], "run_start");
  EXPECT_EQ(lines.front()["policy"], "list");
  EXPECT_EQ(lines.front()["budgets"], json({{"max_steps", 2}, {"max_tool_calls", 10}}));
  EXPECT_EQ(lines.front()["state"]["steps"], 0);
  EXPECT_EQ(lines.front()["tools"], json({"t.echo", "t.fail", "t.finish", "t.write"}));
  EXPECT_EQ(lines.back()["type"], "run_end");
  EXPECT_EQ(lines.back()["stop_reason"], "max_steps");
  for (const json& line : lines) {
    EXPECT_EQ(line["run_id"], "run-1");
    EXPECT_EQ(line["trace_version"], kTraceVersion);
  }
  EXPECT_EQ(lines[1]["type"], "step");
  EXPECT_EQ(lines[1]["step"], 1);
  EXPECT_EQ(lines[1]["decision"], json({{"tool", "t.echo"}, {"args", {{"i", 1}}}}));
  EXPECT_EQ(lines[1]["budget_before"], json({{"steps_left", 2}, {"tools_left", 10}}));
  EXPECT_EQ(lines[2]["budget_before"], json({{"steps_left", 1}, {"tools_left", 9}}));
  EXPECT_TRUE(lines[1]["duration_ms"].is_number());
  EXPECT_TRUE(lines[1]["started_at"].is_string());
  EXPECT_EQ(lines[1]["fingerprint"].get<std::string>().size(), 64u);
  EXPECT_EQ(lines[1]["result"]["ok"], true);
}

TEST(FingerprintTest, IgnoresTimingsButNotArgsObservationOrWorld) {
  json a = {{"ok", true}, {"data", {{"x", 1}}}, {"observed_at", "t1"}, {"cost", {{"wall_ms", 1}}}};
  json b = a;
  b["observed_at"] = "t2";
  b["cost"]["wall_ms"] = 9;
  Action act{"fs.read", {{"path", "a"}}};
  EXPECT_EQ(Fingerprint(act, a, 0), Fingerprint(act, b, 0));
  EXPECT_NE(Fingerprint(act, a, 0), Fingerprint(act, a, 1));
  EXPECT_NE(Fingerprint(act, a, 0), Fingerprint(Action{"fs.read", {{"path", "b"}}}, a, 0));
  json c = a;
  c["data"]["x"] = 2;
  EXPECT_NE(Fingerprint(act, a, 0), Fingerprint(act, c, 0));
}

TEST(NoProgressDetectorTest, CountsInARow) {
  NoProgressDetector d(3);
  EXPECT_FALSE(d.Observe("a"));
  EXPECT_FALSE(d.Observe("a"));
  EXPECT_FALSE(d.Observe("b"));
  EXPECT_FALSE(d.Observe("b"));
  EXPECT_TRUE(d.Observe("b"));
}

TEST(ControlStateTest, SpendFailsWithoutSpendingAtTheLimit) {
  ControlState c;
  c.max_steps = 1;
  c.max_tool_calls = 0;
  EXPECT_TRUE(c.SpendStep());
  EXPECT_FALSE(c.SpendStep());
  EXPECT_EQ(c.steps, 1);
  EXPECT_FALSE(c.SpendTool());
  EXPECT_EQ(c.tool_calls, 0);
}

TEST(StateTest, TestsPassedSinceLastWriteFollowsTheMostRecentTestRun) {
  State s;
  json pass = {{"ok", true}, {"data", {{"passed", true}}}};
  json fail = {{"ok", true}, {"data", {{"passed", false}}}};
  EXPECT_FALSE(s.TestsPassedSinceLastWrite());
  s.AddToolResult("test.run", json::object(), pass);
  EXPECT_TRUE(s.TestsPassedSinceLastWrite());
  ++s.world.version;  // A write after the passing run.
  s.AddToolResult("patch.apply", json::object(), {{"ok", true}});
  EXPECT_FALSE(s.TestsPassedSinceLastWrite());
  s.AddToolResult("test.run", json::object(), pass);
  s.AddToolResult("fs.read", json::object(), {{"ok", true}});
  EXPECT_TRUE(s.TestsPassedSinceLastWrite());
  s.AddToolResult("test.run", json::object(), fail);
  EXPECT_FALSE(s.TestsPassedSinceLastWrite());
}

}  // namespace
}  // namespace agent

namespace agent {
namespace {

// A policy that kills its own process at a given step, as an OOM killer or a CI timeout would.
class KillingPolicy : public Policy {
 public:
  explicit KillingPolicy(int kill_at) : kill_at_(kill_at) {}
  absl::StatusOr<Action> Next(const State& state) override {
    if (state.control.steps == kill_at_) raise(SIGKILL);
    return Action{"t.echo", {{"i", state.control.steps}}};
  }
  std::string Name() const override { return "killing"; }

 private:
  int kill_at_;
};

// A policy whose code throws (a json access on a missing key), as a buggy model adapter might.
class ThrowingPolicy : public Policy {
 public:
  absl::StatusOr<Action> Next(const State& state) override {
    if (state.control.steps == 2) return Action{json::object().at("tool").get<std::string>(), {}};
    return Action{"t.echo", {{"i", state.control.steps}}};
  }
  std::string Name() const override { return "throwing"; }
};

TEST_F(LoopTest, AnExceptionInThePolicyStopsWithErrorAndAFooter) {
  ThrowingPolicy policy;
  auto trace = TraceWriter::Open(trace_path_, true);
  ASSERT_TRUE(trace.ok());
  LoopOptions options;
  options.run_id = "run-x";
  RunSummary s = RunLoop(registry_, policy, state_, &*trace, options);
  EXPECT_EQ(s.stop_reason, StopReason::kError);
  EXPECT_THAT(s.stop_detail, HasSubstr("internal error"));
  EXPECT_EQ(s.run_id, "run-x");
  EXPECT_EQ(s.trace_steps, 1);
  std::vector<json> lines = TraceLines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.back()["type"], "run_end");
  EXPECT_EQ(lines.back()["stop_reason"], "error");
}

// The world the loop fingerprints comes from listing the workspace; when the listing fails (the
// workspace was removed under the run, a permission changed), the run stops with an error that
// says so instead of fingerprinting a world it could not see.
TEST_F(LoopTest, AWorkspaceThatCannotBeListedStopsTheRunWithError) {
  for (int fail_on_call : {1, 2}) {
    ListPolicy policy({Echo(1), Echo(2), Echo(3)});
    auto trace = TraceWriter::Open(trace_path_, true);
    ASSERT_TRUE(trace.ok());
    LoopOptions options;
    options.run_id = "run-l";
    int calls = 0;
    options.list_files = [&]() -> absl::StatusOr<std::vector<std::string>> {
      if (++calls == fail_on_call) return absl::NotFoundError("the workspace is gone");
      return std::vector<std::string>{"a.txt"};
    };
    state_ = State{};
    state_.control.max_steps = 10;
    state_.control.max_tool_calls = 10;
    RunSummary s = RunLoop(registry_, policy, state_, &*trace, options);
    EXPECT_EQ(s.stop_reason, StopReason::kError) << "listing " << fail_on_call;
    EXPECT_EQ(s.stop_detail, "listing the workspace: the workspace is gone");
    EXPECT_EQ(s.steps, fail_on_call - 1) << "no step after the failed listing";
    EXPECT_EQ(TraceLines().back()["stop_detail"], s.stop_detail);
  }
}

TEST_F(LoopTest, AKilledRunLeavesOnlyCompleteParsableLines) {
  KillingPolicy policy(3);
  EXPECT_EXIT(
      {
        auto trace = TraceWriter::Open(trace_path_, true);
        if (!trace.ok()) std::exit(1);
        RunLoop(registry_, policy, state_, &*trace, LoopOptions{});
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  std::ifstream in(trace_path_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::vector<json> lines = TraceLines();  // Throws (fails the test) on a partial line.
  ASSERT_EQ(lines.size(), 3u);             // run_start and steps 1 and 2; no run_end.
  EXPECT_EQ(lines[0]["type"], "run_start");
  EXPECT_EQ(lines[2]["step"], 2);
}

}  // namespace
}  // namespace agent
