#include "agent/observe/diff.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/envelope.h"

namespace agent::observe {

using nlohmann::json;

namespace {

std::string Dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// The snapshot fields a diff looks at (steps, tool_calls and messages follow from the step count).
json StateOf(const StepRecord& s) {
  json out = json::object();
  for (const char* key : {"files", "world_version", "done", "answer"}) {
    out[key] = s.state.contains(key) ? s.state[key] : json(nullptr);
  }
  return out;
}

// The keys of two objects whose values differ, as {key: value} per side.
std::pair<json, json> DifferingKeys(const json& a, const json& b) {
  json da = json::object(), db = json::object();
  for (const auto& [k, v] : a.items()) {
    if (!b.contains(k) || b[k] != v) da[k] = v;
  }
  for (const auto& [k, v] : b.items()) {
    if (!a.contains(k) || a[k] != v) db[k] = v;
  }
  return {da, db};
}

std::optional<StepDiff> CompareStep(const StepRecord& a, const StepRecord& b) {
  json da = {{"tool", a.tool}, {"args", a.args}};
  json db = {{"tool", b.tool}, {"args", b.args}};
  if (da != db) return StepDiff{a.step, "decision", da, db};
  json oa = Observation(a.result), ob = Observation(b.result);
  if (oa != ob) {
    auto [xa, xb] = oa.is_object() && ob.is_object() ? DifferingKeys(oa, ob) : std::pair{oa, ob};
    return StepDiff{a.step, "result", xa, xb};
  }
  json ba = {{"steps_left", a.steps_left}, {"tools_left", a.tools_left}};
  json bb = {{"steps_left", b.steps_left}, {"tools_left", b.tools_left}};
  if (ba != bb) return StepDiff{a.step, "budget", ba, bb};
  json sa = StateOf(a), sb = StateOf(b);
  if (sa != sb) {
    auto [xa, xb] = DifferingKeys(sa, sb);
    return StepDiff{a.step, "state", xa, xb};
  }
  return std::nullopt;
}

std::optional<json> EndOf(const RunRecord& run) {
  if (!run.end) return std::nullopt;
  return json{{"stop_reason", run.stop_reason()},
              {"steps", (*run.end)["steps"]},
              {"tool_calls", (*run.end)["tool_calls"]}};
}

std::string Side(const json& v) {
  if (v.is_null()) return "(no such step)";
  if (v.is_object() && v.contains("tool") && v.contains("args") && v.size() == 2) {
    return absl::StrCat(v["tool"].get<std::string>(), " ", Dump(v["args"]));
  }
  return Dump(v);
}

std::string EndText(const std::optional<json>& end) {
  if (!end) return "no run_end";
  return absl::StrCat((*end)["stop_reason"].get<std::string>(), " after ", Dump((*end)["steps"]),
                      " steps, ", Dump((*end)["tool_calls"]), " tool calls");
}

}  // namespace

DiffReport DiffRuns(const RunRecord& a, const RunRecord& b) {
  DiffReport report;
  report.run_a = a.run_id;
  report.run_b = b.run_id;
  report.steps_a = static_cast<int>(a.steps.size());
  report.steps_b = static_cast<int>(b.steps.size());
  const size_t n = std::max(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= a.steps.size() || i >= b.steps.size()) {
      const StepRecord& present = i < a.steps.size() ? a.steps[i] : b.steps[i];
      json decision = {{"tool", present.tool}, {"args", present.args}};
      report.differences.push_back(StepDiff{present.step, "missing",
                                            i < a.steps.size() ? decision : json(nullptr),
                                            i < b.steps.size() ? decision : json(nullptr)});
      continue;
    }
    std::optional<StepDiff> d = CompareStep(a.steps[i], b.steps[i]);
    if (d) {
      report.differences.push_back(*std::move(d));
    } else {
      ++report.same_steps;
    }
  }
  report.end_a = EndOf(a);
  report.end_b = EndOf(b);
  return report;
}

json DiffReport::ToJson() const {
  json diffs = json::array();
  for (const StepDiff& d : differences) {
    diffs.push_back({{"step", d.step}, {"kind", d.kind}, {"a", d.a}, {"b", d.b}});
  }
  return {{"identical", identical()},
          {"run_a", run_a},
          {"run_b", run_b},
          {"steps_a", steps_a},
          {"steps_b", steps_b},
          {"same_steps", same_steps},
          {"first_divergence", diffs.empty() ? json(nullptr) : diffs[0]},
          {"differences", diffs},
          {"end_a", end_a ? *end_a : json(nullptr)},
          {"end_b", end_b ? *end_b : json(nullptr)}};
}

std::string DiffReport::ToText() const {
  std::string out = absl::StrCat("a: run ", run_a, ", ", steps_a, " steps, ", EndText(end_a),
                                 "\nb: run ", run_b, ", ", steps_b, " steps, ", EndText(end_b), "\n");
  if (identical()) {
    absl::StrAppend(&out, "identical: ", same_steps,
                    " steps with the same decisions, observations, budgets and states\n");
    return out;
  }
  if (!differences.empty()) {
    const StepDiff& first = differences[0];
    absl::StrAppend(&out, "first divergence: step ", first.step, " (", first.kind, ")\n  a: ",
                    Side(first.a), "\n  b: ", Side(first.b), "\n");
    std::map<std::string, std::vector<std::string>> rest;
    for (size_t i = 1; i < differences.size(); ++i) {
      rest[differences[i].kind].push_back(std::to_string(differences[i].step));
    }
    absl::StrAppend(&out, "rest: ", same_steps, " steps the same, ", differences.size() - 1,
                    " more differing");
    for (const auto& [kind, steps] : rest) {
      absl::StrAppend(&out, "; ", kind, " at ", absl::StrJoin(steps, ","));
    }
    absl::StrAppend(&out, "\n");
  } else {
    absl::StrAppend(&out, "all ", same_steps, " steps the same\n");
  }
  if (end_a != end_b) {
    absl::StrAppend(&out, "end differs: a ", EndText(end_a), "; b ", EndText(end_b), "\n");
  }
  return out;
}

}  // namespace agent::observe
