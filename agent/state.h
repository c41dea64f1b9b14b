// The agent's four-layer state (seed 13.3.1, DESIGN.md "Contracts"):
//   task    - what to achieve: goal, done, answer;
//   control - budgets and what is spent, and why the run stopped;
//   session - every action and its observation, failures included (a failure is an observation);
//   world   - the workspace's files and a version bumped by every successful write.
//
// Thread-safety: a State belongs to one run on one thread; it has no internal locking.
#ifndef AGENT_STATE_H_
#define AGENT_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace agent {

enum class StopReason { kNone, kDone, kMaxSteps, kMaxToolCalls, kNoProgress, kError };

// "done", "max_steps", "max_tool_calls", "no_progress", "error"; "" for kNone. Part of the trace
// and summary wire format.
absl::string_view StopReasonName(StopReason reason);

struct TaskState {
  std::string goal;
  bool done = false;
  std::optional<std::string> answer;
};

struct ControlState {
  int max_steps = 8;
  int max_tool_calls = 8;
  int steps = 0;       // Steps spent.
  int tool_calls = 0;  // Tool calls spent.
  StopReason stop_reason = StopReason::kNone;
  std::string stop_detail;  // Why, for kError (and a human line for the others).

  // Spends one step; false (nothing spent) when the step budget is exhausted.
  bool SpendStep();
  // Spends one tool call; false (nothing spent) when the tool budget is exhausted.
  bool SpendTool();
  int steps_left() const { return max_steps - steps; }
  int tools_left() const { return max_tool_calls - tool_calls; }
};

// One action and what came back (the full result envelope).
struct SessionEntry {
  int step = 0;
  std::string tool;
  nlohmann::json args;
  nlohmann::json result;
  uint64_t world_version = 0;  // The world version right after the call.
};

struct SessionState {
  std::vector<SessionEntry> messages;
};

struct WorldState {
  uint64_t version = 0;
  std::vector<std::string> files;  // Workspace files, without .git, build caches and .agent.
};

struct State {
  TaskState task;
  ControlState control;
  SessionState session;
  WorldState world;

  // Appends the call and its envelope to the session, stamped with the current step and world
  // version. Every result goes in, whether ok or not.
  void AddToolResult(const std::string& tool, const nlohmann::json& args,
                     const nlohmann::json& result);

  // Whether the most recent test.run passed (ok, and data.passed) and ran at the current world
  // version, i.e. after the last successful write. task.finish's precondition.
  bool TestsPassedSinceLastWrite() const;

  // The snapshot the trace records after each step: files, world_version, done, answer, steps,
  // tool_calls, messages (session length).
  nlohmann::json Snapshot() const;
};

}  // namespace agent

#endif  // AGENT_STATE_H_
