// Red-team group `loop`: the agent loop's brakes (seed 13.3.1): budgets, the no-progress fingerprint,
// and a policy that misbehaves. The registry holds counting probe tools, so each case can assert how
// often the world was really touched, not only what the summary says.
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/builtin_tools.h"
#include "agent/loop.h"
#include "agent/policy.h"
#include "agent/registry.h"
#include "agent/state.h"
#include "agent/trace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "redteam/testing.h"
#include "sandbox/errors.h"
#include "sandbox/workspace.h"

namespace redteam {
namespace {

using agent::Action;
using agent::StopReason;
using nlohmann::json;

// A policy from a function of the step it is asked for (1-based); counts how often it was asked.
class FnPolicy : public agent::Policy {
 public:
  explicit FnPolicy(std::function<absl::StatusOr<Action>(int call)> next) : next_(std::move(next)) {}
  absl::StatusOr<Action> Next(const agent::State&) override { return next_(++calls); }
  std::string Name() const override { return "redteam"; }
  int calls = 0;

 private:
  std::function<absl::StatusOr<Action>(int)> next_;
};

class LoopTest : public ::testing::Test {
 protected:
  LoopTest() : registry_(agent::ToolEnv{}, {"probe"}) {
    AddProbe("probe.count", [](const json& args) -> absl::StatusOr<agent::ToolOutput> {
      return agent::ToolOutput{args, {}, {}};
    });
    AddProbe("probe.fail", [](const json&) -> absl::StatusOr<agent::ToolOutput> {
      return sandbox::MakeError(sandbox::ErrorCode::kETRANSIENT, "the service is busy");
    });
    AddProbe("probe.throw", [](const json&) -> absl::StatusOr<agent::ToolOutput> {
      throw std::runtime_error("handler bug");
    });
    agent::ToolSpec guarded;
    guarded.name = "probe.guarded";
    guarded.auth_scope = "danger:delete";  // Never granted.
    guarded.input_schema = {{"type", "object"},
                            {"properties", {{"n", {{"type", "integer"}}}}},
                            {"required", {"n"}}};
    guarded.precondition = [this](const agent::ToolContext&, const json&) {
      ++precondition_calls_;
      return absl::OkStatus();
    };
    guarded.handler = [this](agent::ToolContext&, const json&) -> absl::StatusOr<agent::ToolOutput> {
      ++handler_calls_;
      return agent::ToolOutput{};
    };
    EXPECT_TRUE(registry_.Register(std::move(guarded)).ok());
    trace_path_ = dir_.Join("trace.jsonl");
  }

  void AddProbe(const std::string& name,
                std::function<absl::StatusOr<agent::ToolOutput>(const json&)> body) {
    agent::ToolSpec spec;
    spec.name = name;
    spec.auth_scope = "probe";
    spec.input_schema = {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}};
    spec.precondition = [this](const agent::ToolContext&, const json&) {
      ++precondition_calls_;
      return absl::OkStatus();
    };
    spec.handler = [this, body](agent::ToolContext&, const json& args) {
      ++handler_calls_;
      return body(args);
    };
    EXPECT_TRUE(registry_.Register(std::move(spec)).ok());
  }

  agent::RunSummary Run(const agent::Registry& registry, agent::Policy& policy, int max_steps,
                        int max_tool_calls) {
    state_.control.max_steps = max_steps;
    state_.control.max_tool_calls = max_tool_calls;
    absl::StatusOr<agent::TraceWriter> trace = agent::TraceWriter::Open(trace_path_, true);
    EXPECT_TRUE(trace.ok()) << trace.status();
    agent::LoopOptions options;
    options.run_id = "redteam";
    return agent::RunLoop(registry, policy, state_, trace.ok() ? &*trace : nullptr, options);
  }
  agent::RunSummary Run(agent::Policy& policy, int max_steps, int max_tool_calls) {
    return Run(registry_, policy, max_steps, max_tool_calls);
  }

  std::vector<json> TraceLines(const std::string& type) const {
    std::vector<json> lines;
    std::ifstream in(trace_path_);
    for (std::string line; std::getline(in, line);) {
      json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
      EXPECT_FALSE(parsed.is_discarded()) << "unparseable trace line: " << line;
      if (parsed.is_object() && parsed.value("type", "") == type) lines.push_back(parsed);
    }
    return lines;
  }

  static Action Probe(const std::string& tool, int n) { return Action{tool, {{"n", n}}}; }

  ScratchDir dir_{"loop"};
  agent::Registry registry_;
  agent::State state_;
  std::string trace_path_;
  int handler_calls_ = 0;
  int precondition_calls_ = 0;
};

// Incident (seed 13.3.1): the model repeated the same read forever; three equal (action, observation,
// world) fingerprints in a row stop the run with no_progress.
TEST_F(LoopTest, SameActionThreeTimesStopsWithNoProgress) {
  FnPolicy policy([](int) { return Probe("probe.count", 7); });
  agent::RunSummary s = Run(policy, 20, 20);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(handler_calls_, 3);
}

// Incident: a policy alternated between two reads (A, B, A, B...). The fingerprint brake only sees
// equal fingerprints in a row, so it cannot fire; max_steps is the brake that ends this run, exactly
// at the budget.
TEST_F(LoopTest, AlternatingActionsAreStoppedByMaxSteps) {
  FnPolicy policy([](int call) { return Probe("probe.count", call % 2); });
  agent::RunSummary s = Run(policy, 7, 20);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(s.steps, 7);
  EXPECT_EQ(handler_calls_, 7);
}

// Incident: an off-by-one ("<=") let a run take max_steps + 1 steps.
TEST_F(LoopTest, MaxStepsIsExact) {
  FnPolicy policy([](int call) { return Probe("probe.count", call); });
  agent::RunSummary s = Run(policy, 5, 50);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(s.steps, 5);
  EXPECT_EQ(policy.calls, 5) << "the policy was asked for an action the budget could not pay for";
  EXPECT_EQ(handler_calls_, 5);
}

// Incident: the tool budget was checked after the call, so one call too many reached the world.
TEST_F(LoopTest, MaxToolCallsStopsBeforeTheExtraCall) {
  FnPolicy policy([](int call) { return Probe("probe.count", call); });
  agent::RunSummary s = Run(policy, 50, 3);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxToolCalls);
  EXPECT_EQ(s.tool_calls, 3);
  EXPECT_EQ(handler_calls_, 3);
  EXPECT_EQ(state_.control.tool_calls, 3);
}

// Incident: a budget of zero was read as "unlimited" (or let one step through).
TEST_F(LoopTest, ZeroBudgetRunsNothing) {
  FnPolicy policy([](int call) { return Probe("probe.count", call); });
  agent::RunSummary s = Run(policy, 0, 10);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxSteps);
  EXPECT_EQ(policy.calls, 0);
  EXPECT_EQ(handler_calls_, 0);
  FnPolicy policy2([](int call) { return Probe("probe.count", call); });
  agent::State fresh;
  state_ = fresh;
  agent::RunSummary t = Run(policy2, 10, 0);
  EXPECT_EQ(t.stop_reason, StopReason::kMaxToolCalls);
  EXPECT_EQ(handler_calls_, 0);
}

// Incident: the budget was spent after the action, so the trace showed budgets that had already paid
// for the step, and a crash mid-step under-counted. budget_before of step k must be max - (k - 1).
TEST_F(LoopTest, BudgetIsSpentBeforeTheActionNeverAfter) {
  FnPolicy policy([](int call) { return Probe("probe.count", call); });
  agent::RunSummary s = Run(policy, 4, 10);
  ASSERT_EQ(s.steps, 4);
  std::vector<json> steps = TraceLines("step");
  ASSERT_EQ(steps.size(), 4u);
  for (int k = 1; k <= 4; ++k) {
    const json& line = steps[k - 1];
    EXPECT_EQ(line["step"], k);
    EXPECT_EQ(line["budget_before"]["steps_left"], 4 - (k - 1)) << line.dump();
    EXPECT_EQ(line["budget_before"]["tools_left"], 10 - (k - 1)) << line.dump();
    // The state snapshot is taken after the update: it already counts this step and its call.
    EXPECT_EQ(line["state"]["steps"], k) << line.dump();
    EXPECT_EQ(line["state"]["tool_calls"], k) << line.dump();
  }
}

// Incident: failed calls were not charged, so a policy retrying a failing tool with fresh arguments
// ran forever. A failure is an observation, and it costs a step and a tool call like a success.
TEST_F(LoopTest, FailedCallsSpendTheBudgetToo) {
  FnPolicy policy([](int call) { return Probe("probe.fail", call); });
  agent::RunSummary s = Run(policy, 50, 4);
  EXPECT_EQ(s.stop_reason, StopReason::kMaxToolCalls);
  EXPECT_EQ(handler_calls_, 4);
  ASSERT_EQ(state_.session.messages.size(), 4u) << "every failure goes into the session";
  for (const agent::SessionEntry& e : state_.session.messages) {
    EXPECT_EQ(e.result["ok"], false);
    EXPECT_EQ(e.result["error"]["code"], "ETRANSIENT");
  }
}

// Incident: the model ignored EPERM and asked for ../secret.txt again and again (the seed's escape
// mode). Every attempt is refused, nothing leaks, and the repeated refusal is no progress: the run
// stops at the third, well before max_steps.
TEST_F(LoopTest, PolicyIgnoringEpermForeverStopsWithNoProgress) {
  ScratchDir base("escape");
  const std::string root = base.Join("ws");
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(base.Join("secret.txt"), "SECRET"));
  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(root, agent::AgentWorkspaceOptions());
  ASSERT_TRUE(ws.ok()) << ws.status();
  agent::ToolEnv env;
  env.workspace = &*ws;
  agent::Registry tools(env, agent::BuiltinScopes());
  ASSERT_TRUE(agent::RegisterBuiltinTools(tools).ok());
  FnPolicy policy([](int) { return Action{"fs.read", {{"path", "../secret.txt"}}}; });
  agent::RunSummary s = Run(tools, policy, 20, 20);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  EXPECT_EQ(s.steps, 3);
  ASSERT_EQ(state_.session.messages.size(), 3u);
  for (const agent::SessionEntry& e : state_.session.messages) {
    EXPECT_EQ(e.result["ok"], false);
    EXPECT_EQ(e.result["error"]["code"], "EPERM");
    EXPECT_EQ(e.result["error"]["suggested_action"], "stop");
    EXPECT_EQ(e.result.dump().find("SECRET"), std::string::npos);
  }
}

// Incident: the model endpoint failed and the loop treated the error as "no action" and spun. A policy
// error stops the run with the error reason and its message; no tool runs after it.
TEST_F(LoopTest, PolicyErrorStopsTheRunWithTheErrorReason) {
  FnPolicy policy([](int call) -> absl::StatusOr<Action> {
    if (call == 2) return sandbox::MakeError(sandbox::ErrorCode::kETRANSIENT, "model unreachable");
    return Probe("probe.count", call);
  });
  agent::RunSummary s = Run(policy, 20, 20);
  EXPECT_EQ(s.stop_reason, StopReason::kError);
  EXPECT_NE(s.stop_detail.find("model unreachable"), std::string::npos) << s.stop_detail;
  EXPECT_EQ(handler_calls_, 1);
  EXPECT_EQ(policy.calls, 2);
  std::vector<json> end = TraceLines("run_end");
  ASSERT_EQ(end.size(), 1u) << "the trace must still be closed with a run_end line";
  EXPECT_EQ(end[0]["stop_reason"], "error");
}

// Incident: the model named a tool that does not exist ("shell.exec"); the loop crashed. An unknown
// tool is an error envelope like any other, and the brakes still apply.
TEST_F(LoopTest, UnknownToolIsAnObservationNotACrash) {
  FnPolicy policy([](int) { return Action{"shell.exec", {{"cmd", "rm -rf /"}}}; });
  agent::RunSummary s = Run(policy, 10, 10);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  ASSERT_FALSE(state_.session.messages.empty());
  for (const agent::SessionEntry& e : state_.session.messages) {
    EXPECT_EQ(e.result["ok"], false) << e.result.dump();
    EXPECT_TRUE(e.result["error"].is_object());
  }
}

// Incident: a handler threw, the exception escaped the registry and the run died without a run_end
// line. It becomes EINTERNAL, the run goes on, and the trace is closed.
TEST_F(LoopTest, ThrowingHandlerBecomesEinternalNotACrash) {
  FnPolicy policy([](int) { return Probe("probe.throw", 1); });
  agent::RunSummary s = Run(policy, 10, 10);
  EXPECT_EQ(s.stop_reason, StopReason::kNoProgress);
  ASSERT_FALSE(state_.session.messages.empty());
  EXPECT_EQ(state_.session.messages[0].result["error"]["code"], "EINTERNAL");
  EXPECT_EQ(TraceLines("run_end").size(), 1u);
}

// Incident: an unauthorised call ran its precondition (which had side effects) before the scope check,
// and bad arguments were reported instead of the denial. Order: scope -> schema -> precondition ->
// handler; a missing scope stops at the first stage.
TEST_F(LoopTest, UngrantedScopeStopsBeforeSchemaPreconditionAndHandler) {
  agent::State state;
  json bad_args = registry_.Call(state, "probe.guarded", {{"n", "not a number"}});
  EXPECT_EQ(bad_args["error"]["code"], "EPERM") << bad_args.dump();
  json good_args = registry_.Call(state, "probe.guarded", {{"n", 1}});
  EXPECT_EQ(good_args["error"]["code"], "EPERM") << good_args.dump();
  EXPECT_EQ(precondition_calls_, 0);
  EXPECT_EQ(handler_calls_, 0);
}

// Incident: arguments of the wrong type reached a handler that trusted them. The schema stage refuses
// them (EINVAL) before the precondition and the handler run.
TEST_F(LoopTest, SchemaViolationNeverReachesPreconditionOrHandler) {
  agent::State state;
  for (const json& args : {json{{"n", "seven"}}, json("not an object"), json{{"n", 1.5}}}) {
    json r = registry_.Call(state, "probe.count", args);
    EXPECT_EQ(r["error"]["code"], "EINVAL") << args.dump() << " -> " << r.dump();
  }
  EXPECT_EQ(precondition_calls_, 0);
  EXPECT_EQ(handler_calls_, 0);
}

}  // namespace
}  // namespace redteam
