#include "agent/loop.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/envelope.h"
#include "agent/sha256.h"

namespace agent {

using nlohmann::json;

std::string Fingerprint(const Action& action, const json& envelope, uint64_t world_version) {
  json material = {{"tool", action.tool},
                   {"args", action.args},
                   {"observation", Observation(envelope)},
                   {"world_version", world_version}};
  // nlohmann::json keeps object keys sorted, so the dump is canonical.
  return Sha256Hex(material.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool NoProgressDetector::Observe(const std::string& fingerprint) {
  if (fingerprint == last_) {
    ++run_;
  } else {
    last_ = fingerprint;
    run_ = 1;
  }
  return run_ >= window_;
}

json RunSummary::ToJson() const {
  return {{"answer", answer ? json(*answer) : json(nullptr)},
          {"steps", steps},
          {"stop_reason", std::string(StopReasonName(stop_reason))},
          {"tool_calls", tool_calls},
          {"trace_steps", trace_steps}};
}

std::string NewRunId() {
  absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

namespace {

void Stop(State& state, StopReason reason, std::string detail) {
  state.control.stop_reason = reason;
  state.control.stop_detail = std::move(detail);
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
  return static_cast<double>(us) / 1000.0;
}

absl::Status RefreshWorld(State& state, const LoopOptions& options) {
  if (!options.list_files) return absl::OkStatus();
  absl::StatusOr<std::vector<std::string>> files = options.list_files();
  if (!files.ok()) return files.status();
  state.world.files = *std::move(files);
  return absl::OkStatus();
}

// The loop proper; may throw only through nlohmann::json misuse, which RunLoop catches. Fills
// `summary` as it goes, so a caught exception still reports the run id and the steps traced.
void RunLoopOrThrow(const ToolCaller& registry, Policy& policy, State& state, TraceWriter* trace,
                    const LoopOptions& options, RunSummary& summary) {
  auto write = [&](const std::string& type, json line) -> bool {
    if (trace == nullptr) return true;
    absl::Status s = trace->Write(type, summary.run_id, std::move(line));
    if (!s.ok()) Stop(state, StopReason::kError, absl::StrCat("trace: ", s.message()));
    return s.ok();
  };

  if (absl::Status s = RefreshWorld(state, options); !s.ok()) {
    Stop(state, StopReason::kError, absl::StrCat("listing the workspace: ", s.message()));
  }
  json header = options.header.is_object() ? options.header : json::object();
  header["started_at"] = Rfc3339Millis(absl::Now());
  header["goal"] = state.task.goal;
  header["policy"] = policy.Name();
  header["budgets"] = {{"max_steps", state.control.max_steps},
                       {"max_tool_calls", state.control.max_tool_calls}};
  header["no_progress_window"] = options.no_progress_window;
  header["tools"] = registry.Names();
  header["state"] = state.Snapshot();  // Where replay starts from.
  bool trace_ok = write("run_start", std::move(header));

  NoProgressDetector detector(options.no_progress_window);
  std::optional<Action> pending;
  while (trace_ok && state.control.stop_reason == StopReason::kNone && !state.task.done) {
    json budget_before = {{"steps_left", state.control.steps_left()},
                          {"tools_left", state.control.tools_left()}};
    if (!state.control.SpendStep()) {
      Stop(state, StopReason::kMaxSteps,
           absl::StrCat("step budget of ", state.control.max_steps, " spent"));
      break;
    }
    absl::StatusOr<Action> action = policy.Next(state);
    if (!action.ok()) {
      Stop(state, StopReason::kError, absl::StrCat("policy: ", action.status().message()));
      break;
    }
    if (!state.control.SpendTool()) {
      Stop(state, StopReason::kMaxToolCalls,
           absl::StrCat("tool-call budget of ", state.control.max_tool_calls, " spent"));
      pending = *action;
      break;
    }
    const std::string started_at = Rfc3339Millis(absl::Now());
    auto start = std::chrono::steady_clock::now();
    json result = registry.Call(state, action->tool, action->args);
    double duration_ms = MillisSince(start);
    state.AddToolResult(action->tool, action->args, result);
    if (absl::Status s = RefreshWorld(state, options); !s.ok()) {
      Stop(state, StopReason::kError, absl::StrCat("listing the workspace: ", s.message()));
    }
    std::string fingerprint = Fingerprint(*action, result, state.world.version);
    trace_ok = write("step", {{"step", state.control.steps},
                              {"decision", {{"tool", action->tool}, {"args", action->args}}},
                              {"result", result},
                              {"started_at", started_at},
                              {"duration_ms", duration_ms},
                              {"budget_before", budget_before},
                              {"state", state.Snapshot()},
                              {"fingerprint", fingerprint}});
    if (!trace_ok) break;
    ++summary.trace_steps;
    if (state.task.done) break;
    if (detector.Observe(fingerprint)) {
      Stop(state, StopReason::kNoProgress,
           absl::StrCat(options.no_progress_window,
                        " steps in a row with the same action, observation and world version"));
    }
  }
  if (state.task.done && state.control.stop_reason == StopReason::kNone) {
    Stop(state, StopReason::kDone, "task.finish accepted");
  }
  if (trace_ok) {
    json pending_json = pending ? json{{"tool", pending->tool}, {"args", pending->args}}
                                : json(nullptr);
    write("run_end",
          {{"stop_reason", std::string(StopReasonName(state.control.stop_reason))},
           {"stop_detail", state.control.stop_detail},
           {"steps", state.control.steps},
           {"tool_calls", state.control.tool_calls},
           {"trace_steps", summary.trace_steps},
           {"answer", state.task.answer ? json(*state.task.answer) : json(nullptr)},
           {"ended_at", Rfc3339Millis(absl::Now())},
           {"pending_decision", pending_json}});
  }
  summary.answer = state.task.answer;
  summary.steps = state.control.steps;
  summary.stop_reason = state.control.stop_reason;
  summary.stop_detail = state.control.stop_detail;
  summary.tool_calls = state.control.tool_calls;
}

}  // namespace

RunSummary RunLoop(const ToolCaller& tools, Policy& policy, State& state, TraceWriter* trace,
                   const LoopOptions& options) {
  RunSummary summary;
  summary.run_id = options.run_id.empty() ? NewRunId() : options.run_id;
  try {
    RunLoopOrThrow(tools, policy, state, trace, options, summary);
    return summary;
  } catch (const std::exception& e) {
    Stop(state, StopReason::kError, absl::StrCat("internal error in the loop: ", e.what()));
  }
  if (trace != nullptr) {
    // Best effort: the footer says why the run ended; a failure here leaves the trace a valid prefix.
    try {
      (void)trace->Write(
          "run_end", summary.run_id,
          {{"stop_reason", std::string(StopReasonName(state.control.stop_reason))},
           {"stop_detail", state.control.stop_detail},
           {"steps", state.control.steps},
           {"tool_calls", state.control.tool_calls},
           {"trace_steps", summary.trace_steps},
           {"answer", state.task.answer ? json(*state.task.answer) : json(nullptr)},
           {"ended_at", Rfc3339Millis(absl::Now())},
           {"pending_decision", nullptr}});
    } catch (const std::exception&) {
      // Nothing more can be recorded; the summary below still reports the error.
    }
  }
  summary.answer = state.task.answer;
  summary.steps = state.control.steps;
  summary.stop_reason = state.control.stop_reason;
  summary.stop_detail = state.control.stop_detail;
  summary.tool_calls = state.control.tool_calls;
  return summary;
}

}  // namespace agent
