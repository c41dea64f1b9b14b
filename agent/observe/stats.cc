#include "agent/observe/stats.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace agent::observe {

using nlohmann::json;

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

namespace {

struct ToolAccumulator {
  int calls = 0;
  int errors = 0;
  std::vector<double> durations;
};

// Adds a result's cost to the totals; returns the units this call counts for.
double AddCost(const json& result, std::map<std::string, double>& totals) {
  double units = 1;
  auto it = result.find("cost");
  if (it == result.end() || !it->is_object()) return units;
  for (const auto& [key, value] : it->items()) {
    if (!value.is_number()) continue;
    if (key == "units") {
      units = value.get<double>();
    } else {
      totals[key] += value.get<double>();
    }
  }
  return units;
}

}  // namespace

json ComputeStats(const TraceSet& set) {
  std::map<std::string, ToolAccumulator> tools;
  std::map<std::string, int> errors_by_code;
  std::map<std::string, std::map<std::string, int>> errors_by_tool;
  std::map<std::string, int> stop_reasons;
  std::map<std::string, double> cost_totals;
  double cost_units = 0;
  int steps = 0, failed = 0, complete = 0;
  json details = json::array();

  for (const RunRecord& run : set.runs) {
    json curve = json::array();
    int run_failed = 0;
    for (const StepRecord& s : run.steps) {
      ++steps;
      ToolAccumulator& acc = tools[s.tool];
      ++acc.calls;
      acc.durations.push_back(s.duration_ms);
      if (!s.ok()) {
        ++failed;
        ++run_failed;
        ++acc.errors;
        const std::string code = s.error_code();
        ++errors_by_code[code];
        ++errors_by_tool[s.tool][code];
      }
      cost_units += AddCost(s.result, cost_totals);
      curve.push_back({{"step", s.step}, {"steps_left", s.steps_left}, {"tools_left", s.tools_left}});
    }
    const std::string stop = run.end ? run.stop_reason() : "(no run_end)";
    ++stop_reasons[stop];
    if (run.end) ++complete;
    details.push_back({{"run_id", run.run_id},
                       {"policy", run.policy()},
                       {"steps", run.steps.size()},
                       {"stop_reason", run.end ? json(run.stop_reason()) : json(nullptr)},
                       {"complete", run.end.has_value()},
                       {"failed_steps", run_failed},
                       {"budget_curve", curve}});
  }

  std::vector<std::pair<std::string, ToolAccumulator>> ordered(tools.begin(), tools.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second.calls > b.second.calls; });
  json tool_rows = json::array();
  for (const auto& [name, acc] : ordered) {
    tool_rows.push_back({{"tool", name},
                         {"calls", acc.calls},
                         {"errors", acc.errors},
                         {"p50_ms", Percentile(acc.durations, 50)},
                         {"p95_ms", Percentile(acc.durations, 95)},
                         {"max_ms", Percentile(acc.durations, 100)}});
  }
  const size_t runs = set.runs.size();
  return {{"runs", runs},
          {"complete_runs", complete},
          {"steps", steps},
          {"mean_steps", runs == 0 ? 0.0 : static_cast<double>(steps) / static_cast<double>(runs)},
          {"failed_steps", failed},
          {"error_rate", steps == 0 ? 0.0 : static_cast<double>(failed) / steps},
          {"stop_reasons", stop_reasons},
          {"tools", tool_rows},
          {"errors_by_code", errors_by_code},
          {"errors_by_tool", errors_by_tool},
          {"cost_units", cost_units},
          {"cost_totals", cost_totals},
          {"run_details", details},
          {"warnings", set.warnings}};
}

namespace {

// Integers (and integral doubles, e.g. summed units) without decimals, others with three.
std::string Num(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  const double d = v.get<double>();
  if (std::floor(d) == d && std::fabs(d) < 1e15) return absl::StrFormat("%.0f", d);
  return absl::StrFormat("%.3f", d);
}

std::string Counts(const json& object) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : object.items()) parts.push_back(absl::StrCat(key, " ", Num(value)));
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

}  // namespace

std::string FormatStatsText(const json& stats) {
  std::string out;
  absl::StrAppend(&out, "runs ", Num(stats["runs"]), " (", Num(stats["complete_runs"]),
                  " with run_end)\n");
  absl::StrAppend(&out, "steps ", Num(stats["steps"]), ", mean steps per run ",
                  absl::StrFormat("%.2f", stats["mean_steps"].get<double>()), "\n");
  absl::StrAppend(&out, "tool error rate ", absl::StrFormat("%.3f", stats["error_rate"].get<double>()),
                  " (", Num(stats["failed_steps"]), " of ", Num(stats["steps"]), " steps failed)\n");
  absl::StrAppend(&out, "stop reasons: ", Counts(stats["stop_reasons"]), "\n");
  absl::StrAppend(&out, "cost: units ", Num(stats["cost_units"]));
  for (const auto& [key, value] : stats["cost_totals"].items()) {
    absl::StrAppend(&out, ", ", key, " ", Num(value));
  }
  absl::StrAppend(&out, "\n\n");

  absl::StrAppend(&out, absl::StrFormat("%-16s %6s %6s %10s %10s %10s\n", "tool", "calls", "errors",
                                        "p50_ms", "p95_ms", "max_ms"));
  for (const json& t : stats["tools"]) {
    absl::StrAppend(&out, absl::StrFormat("%-16s %6d %6d %10.3f %10.3f %10.3f\n",
                                          t["tool"].get<std::string>(), t["calls"].get<int>(),
                                          t["errors"].get<int>(), t["p50_ms"].get<double>(),
                                          t["p95_ms"].get<double>(), t["max_ms"].get<double>()));
  }
  absl::StrAppend(&out, "\nerrors by code: ", Counts(stats["errors_by_code"]), "\n");
  absl::StrAppend(&out, "errors by tool:");
  if (stats["errors_by_tool"].empty()) absl::StrAppend(&out, " none");
  absl::StrAppend(&out, "\n");
  for (const auto& [tool, codes] : stats["errors_by_tool"].items()) {
    absl::StrAppend(&out, "  ", tool, ": ", Counts(codes), "\n");
  }

  absl::StrAppend(&out, "\nbudget curve (step: steps_left/tools_left before the step)\n");
  for (const json& run : stats["run_details"]) {
    absl::StrAppend(&out, "  run ", run["run_id"].get<std::string>(), " (",
                    run["policy"].get<std::string>().empty() ? "no run_start"
                                                             : run["policy"].get<std::string>(),
                    ", ",
                    run["stop_reason"].is_string() ? run["stop_reason"].get<std::string>()
                                                   : std::string("no run_end"),
                    ", ", Num(run["steps"]), " steps):");
    for (const json& p : run["budget_curve"]) {
      absl::StrAppend(&out, " ", Num(p["step"]), ":", Num(p["steps_left"]), "/",
                      Num(p["tools_left"]));
    }
    absl::StrAppend(&out, "\n");
  }
  if (!stats["warnings"].empty()) {
    absl::StrAppend(&out, "\nwarnings:\n");
    for (const json& w : stats["warnings"]) absl::StrAppend(&out, "  ", w.get<std::string>(), "\n");
  }
  return out;
}

}  // namespace agent::observe
