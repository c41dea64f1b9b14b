// `trace stats`: the numbers seed 13.7.3/13.7.5 computes from a trace, grouped by run_id as the seed
// says a real system must: runs, steps, tool counts, error rate, errors by code and by tool, the
// budget curve, p50/p95/max duration per tool, and cost.
//
// Cost: the trace records tool quota, not tokens (seed 13.7.3). `cost_units` sums the numeric
// `units` field of each result's cost and counts a call without one as 1 unit (one tool call of
// quota); every other numeric cost field (wall_ms, cpu_ms, money_cents, ...) is summed under its name.
// Percentiles are nearest-rank over the recorded duration_ms of that tool's calls.
//
// Thread-safety: pure functions.
#ifndef AGENT_OBSERVE_STATS_H_
#define AGENT_OBSERVE_STATS_H_

#include <string>
#include <vector>

#include "agent/observe/trace_reader.h"
#include "nlohmann/json.hpp"

namespace agent::observe {

// Nearest-rank percentile `p` (0 < p <= 100) of `values` (need not be sorted); 0 for none.
double Percentile(std::vector<double> values, double p);

// The statistics as JSON (the `--json` output; the text form is made from it):
// {runs, complete_runs, steps, mean_steps, failed_steps, error_rate, stop_reasons{},
//  tools[{tool, calls, errors, p50_ms, p95_ms, max_ms}], errors_by_code{}, errors_by_tool{tool:{code:n}},
//  cost_units, cost_totals{}, run_details[{run_id, policy, steps, stop_reason, complete, failed_steps,
//  budget_curve[{step, steps_left, tools_left}]}], warnings[]}
nlohmann::json ComputeStats(const TraceSet& set);

// The human-readable form of ComputeStats' output.
std::string FormatStatsText(const nlohmann::json& stats);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_STATS_H_
