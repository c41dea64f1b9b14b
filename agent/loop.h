// The agent loop (seed 13.3.1, DESIGN.md "One run, as data"):
//
//   while not done:
//     spend_step (or stop: max_steps) -> policy.Next(state) (or stop: error)
//     -> spend_tool (or stop: max_tool_calls) -> registry.Call -> state.AddToolResult
//     -> refresh the world's file list -> trace line (after the state update)
//     -> fingerprint(action, observation, world version): `window` equal in a row -> stop: no_progress
//
// The observation in the fingerprint is the envelope without observed_at and cost (timings), so a
// repeated call that sees the same thing in the same world counts as no progress even though its
// clock readings differ. A repeated refused call (escape mode) is therefore no progress as well.
//
// Thread-safety: one run per thread; the registry, policy, state and trace are the caller's.
#ifndef AGENT_LOOP_H_
#define AGENT_LOOP_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/policy.h"
#include "agent/registry.h"
#include "agent/state.h"
#include "agent/trace.h"
#include "nlohmann/json.hpp"

namespace agent {

// sha256 hex over the canonical JSON of {tool, args, observation, world_version}.
std::string Fingerprint(const Action& action, const nlohmann::json& envelope,
                        uint64_t world_version);

// Counts equal fingerprints in a row.
class NoProgressDetector {
 public:
  explicit NoProgressDetector(int window) : window_(window) {}
  // Records `fingerprint`; true once `window` equal ones have come in a row.
  bool Observe(const std::string& fingerprint);

 private:
  int window_;
  std::string last_;
  int run_ = 0;
};

struct LoopOptions {
  int no_progress_window = 3;
  // Lists the workspace's files for the world state after each step; unset leaves world.files alone.
  std::function<absl::StatusOr<std::vector<std::string>>()> list_files;
  std::string run_id;                          // Empty: a fresh random id.
  nlohmann::json header = nlohmann::json::object();  // Extra fields for the run_start line.
};

struct RunSummary {
  std::string run_id;
  std::optional<std::string> answer;
  int steps = 0;
  StopReason stop_reason = StopReason::kNone;
  std::string stop_detail;
  int tool_calls = 0;
  int trace_steps = 0;

  // The demo's summary: {answer, steps, stop_reason, tool_calls, trace_steps}.
  nlohmann::json ToJson() const;
};

// A fresh random run id (32 lower-case hex characters).
std::string NewRunId();

// Runs until done or a stop condition, calling tools through `tools` (normally the Registry). `trace`
// may be null (no trace). Never throws.
RunSummary RunLoop(const ToolCaller& tools, Policy& policy, State& state, TraceWriter* trace,
                   const LoopOptions& options);

}  // namespace agent

#endif  // AGENT_LOOP_H_
