// `trace diff`: two runs, step by step (the regression half of issue 8: record a good run once, then
// diff a new recording against it).
//
// Per step, in this order, the first difference found names the step's kind of divergence:
//   decision  - tool or args differ;
//   result    - the observation differs (the envelope without observed_at and cost, which are
//               measurements and differ on every run);
//   budget    - budget_before differs;
//   state     - the snapshot's files, world_version, done or answer differ.
// duration_ms, observed_at, cost and fingerprints are not compared. A step present in one run only is
// a divergence of kind "missing". The run_end lines are compared on stop_reason, steps and tool_calls.
//
// Thread-safety: pure functions.
#ifndef AGENT_OBSERVE_DIFF_H_
#define AGENT_OBSERVE_DIFF_H_

#include <optional>
#include <string>
#include <vector>

#include "agent/observe/trace_reader.h"
#include "nlohmann/json.hpp"

namespace agent::observe {

struct StepDiff {
  int step = 0;
  std::string kind;  // decision, result, budget, state, missing.
  nlohmann::json a;  // What differs, from each side (null for a missing step).
  nlohmann::json b;
};

struct DiffReport {
  std::string run_a;
  std::string run_b;
  int steps_a = 0;
  int steps_b = 0;
  int same_steps = 0;
  std::vector<StepDiff> differences;  // Every differing step, in order.
  std::optional<nlohmann::json> end_a;  // {stop_reason, steps, tool_calls}, if the run has run_end.
  std::optional<nlohmann::json> end_b;

  bool identical() const { return differences.empty() && end_a == end_b; }
  nlohmann::json ToJson() const;
  // The first divergent step in full, then one line per kind for the rest, then the run ends.
  std::string ToText() const;
};

DiffReport DiffRuns(const RunRecord& a, const RunRecord& b);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_DIFF_H_
