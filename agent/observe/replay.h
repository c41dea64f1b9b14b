// `trace replay`: rebuilds a run's decision chain from its recorded evidence (seed 13.7.4) and checks
// that the same policy makes the same decisions.
//
// How: the agent's real loop (agent::RunLoop) runs again from run_start's initial state snapshot
// (world files and version, done, answer) with the policy named in run_start, and its
// tool door (agent::ToolCaller, normally the Registry) is a table of recorded results: for step N it
// returns step N's recorded envelope unchanged and sets the world version, done and answer from step
// N's recorded state snapshot. The seed says it this way (13.7.4): "replace registry.call with a
// table lookup that returns the recorded result". The real loop does the rest exactly as in the
// recorded run: budgets, the session, the no-progress fingerprint and its stop. There is no registry,
// workspace or runner behind the table and no trace is written, so nothing in a replay reaches the
// filesystem or starts a process (replay_no_side_effects_test proves it under a seccomp filter that
// kills the process on either).
//
// What is compared, in order:
//   - each decision {tool, args} against the recorded step's (the first difference stops the loop);
//   - a policy error where the recording has a step, or a decision where it has none;
//   - each step's recorded fingerprint against the one recomputed from the decision, the replayed
//     observation and world version (a trace edited by hand, or a changed fingerprint rule);
//   - at the end: stop_reason, steps and tool_calls against run_end (a run stopped by max_tool_calls
//     also compares the pending decision).
// A recording without run_end (a killed run) is replayed as far as it goes: a match of the prefix.
//
// Thread-safety: one replay per thread.
#ifndef AGENT_OBSERVE_REPLAY_H_
#define AGENT_OBSERVE_REPLAY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/observe/trace_reader.h"
#include "agent/policy.h"
#include "nlohmann/json.hpp"

namespace agent::observe {

// Builds the policy a run_start names. The default knows "scripted:good|loop|escape".
using PolicyFactory = std::function<absl::StatusOr<std::unique_ptr<Policy>>(const std::string&)>;

// ScriptedPolicy for "scripted:<mode>"; InvalidArgument naming the policy otherwise.
absl::StatusOr<std::unique_ptr<Policy>> MakeRecordedPolicy(const std::string& name);

struct Divergence {
  int step = 0;
  // "decision", "fingerprint" or "stop".
  std::string kind;
  nlohmann::json recorded;
  nlohmann::json replayed;
};

struct ReplayReport {
  std::string run_id;
  std::string policy;
  int recorded_steps = 0;
  int matched_steps = 0;      // Decisions equal to the recording.
  int results_served = 0;     // Recorded results handed to the loop in place of tool calls.
  bool recording_complete = false;  // The run has a run_end line.
  std::string recorded_stop_reason;
  std::string replayed_stop_reason;
  std::optional<Divergence> divergence;

  bool match() const { return !divergence.has_value(); }
  nlohmann::json ToJson() const;
  // One line for a match; for a divergence the step, then the recorded and the new side.
  std::string ToText() const;
};

// Replays `run`. Errors (InvalidArgument) only when the run cannot be replayed at all: no run_start,
// or a policy the factory does not know.
absl::StatusOr<ReplayReport> Replay(const RunRecord& run,
                                    const PolicyFactory& make_policy = MakeRecordedPolicy);

// "tool {args}" as one line, for messages.
std::string DecisionText(const nlohmann::json& decision);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_REPLAY_H_
