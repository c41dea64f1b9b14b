#include "agent/observe/otel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/sha256.h"

namespace agent::observe {

using nlohmann::json;

std::string OtelTraceId(const std::string& run_id) {
  return Sha256Hex(absl::StrCat("otel-trace:", run_id)).substr(0, 32);
}

std::string OtelSpanId(const std::string& run_id, int step) {
  return Sha256Hex(absl::StrCat("otel-span:", run_id, ":", step)).substr(0, 16);
}

namespace {

constexpr char kNs[] = "sandboxed_agent.";
constexpr int kSpanKindInternal = 1;  // opentelemetry.proto.trace.v1.Span.SpanKind.
constexpr int kStatusUnset = 0;       // opentelemetry.proto.trace.v1.Status.StatusCode.
constexpr int kStatusError = 2;

json Str(const std::string& key, const std::string& value) {
  return {{"key", key}, {"value", {{"stringValue", value}}}};
}
json Int(const std::string& key, int64_t value) {
  return {{"key", key}, {"value", {{"intValue", std::to_string(value)}}}};
}
json Bool(const std::string& key, bool value) {
  return {{"key", key}, {"value", {{"boolValue", value}}}};
}

// Nanoseconds since the epoch of an RFC 3339 string field, if present and valid.
std::optional<int64_t> TimeNs(const json& object, const char* field) {
  if (!object.is_object() || !object.contains(field) || !object[field].is_string()) {
    return std::nullopt;
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, object[field].get<std::string>(), &t, &err)) {
    return std::nullopt;
  }
  return absl::ToUnixNanos(t);
}

int64_t MillisToNs(double ms) { return static_cast<int64_t>(std::llround(ms * 1e6)); }

json Status(int code, const std::string& message) {
  json s = {{"code", code}};
  if (!message.empty()) s["message"] = message;
  return s;
}

json StepSpan(const RunRecord& run, const StepRecord& s, int64_t& cursor_ns, int64_t run_start_ns) {
  // Step lines carry started_at (ms) and the call's duration (us); older lines only the result's
  // observed_at, the end of the call.
  const int64_t duration = MillisToNs(s.duration_ms);
  int64_t start, end;
  if (std::optional<int64_t> started = TimeNs(json{{"started_at", s.started_at}}, "started_at"); started) {
    start = std::max(*started, run_start_ns);
    end = start + duration;
  } else {
    end = TimeNs(s.result, "observed_at").value_or(cursor_ns + duration);
    start = std::max(end - duration, run_start_ns);
    end = std::max(end, start);
  }
  cursor_ns = end;

  json attrs = json::array({
      Str("gen_ai.operation.name", "execute_tool"),
      Str("gen_ai.tool.name", s.tool),
      Str("gen_ai.tool.call.id", absl::StrCat(run.run_id, "-", s.step)),
      Str("gen_ai.tool.type", "function"),
      Int(absl::StrCat(kNs, "step"), s.step),
      Int(absl::StrCat(kNs, "budget.steps_left"), s.steps_left),
      Int(absl::StrCat(kNs, "budget.tools_left"), s.tools_left),
      Bool(absl::StrCat(kNs, "result.ok"), s.ok()),
  });
  if (s.state.contains("world_version") && s.state["world_version"].is_number_integer()) {
    attrs.push_back(Int(absl::StrCat(kNs, "world_version"), s.state["world_version"].get<int64_t>()));
  }
  json status = Status(kStatusUnset, "");
  if (!s.ok()) {
    const json& error = s.result["error"];
    attrs.push_back(Str("error.type", s.error_code()));
    if (error.contains("retryable") && error["retryable"].is_boolean()) {
      attrs.push_back(Bool(absl::StrCat(kNs, "error.retryable"), error["retryable"].get<bool>()));
    }
    if (error.contains("suggested_action") && error["suggested_action"].is_string()) {
      attrs.push_back(Str(absl::StrCat(kNs, "error.suggested_action"),
                          error["suggested_action"].get<std::string>()));
    }
    status = Status(kStatusError, error.value("message", ""));
  }
  return {{"traceId", OtelTraceId(run.run_id)},
          {"spanId", OtelSpanId(run.run_id, s.step)},
          {"parentSpanId", OtelSpanId(run.run_id, 0)},
          {"name", absl::StrCat("execute_tool ", s.tool)},
          {"kind", kSpanKindInternal},
          {"startTimeUnixNano", std::to_string(start)},
          {"endTimeUnixNano", std::to_string(end)},
          {"attributes", attrs},
          {"status", status}};
}

void AddRunSpans(const RunRecord& run, json& spans) {
  const json start_line = run.start ? *run.start : json::object();
  const json end_line = run.end ? *run.end : json::object();
  int64_t first_observed = 0;
  if (!run.steps.empty()) {
    first_observed = TimeNs(run.steps[0].result, "observed_at")
                         .value_or(0) - MillisToNs(run.steps[0].duration_ms);
  }
  const int64_t run_start = TimeNs(start_line, "started_at").value_or(std::max<int64_t>(first_observed, 0));
  int64_t cursor = run_start;
  std::vector<json> step_spans;
  for (const StepRecord& s : run.steps) step_spans.push_back(StepSpan(run, s, cursor, run_start));
  const int64_t run_end = std::max(TimeNs(end_line, "ended_at").value_or(cursor), cursor);

  json attrs = json::array({
      Str("gen_ai.operation.name", "invoke_agent"),
      Str("gen_ai.conversation.id", run.run_id),
      Str(absl::StrCat(kNs, "run_id"), run.run_id),
      Str(absl::StrCat(kNs, "policy"), run.policy()),
      Bool(absl::StrCat(kNs, "trace.complete"), run.end.has_value()),
  });
  if (start_line.contains("goal") && start_line["goal"].is_string()) {
    attrs.push_back(Str(absl::StrCat(kNs, "goal"), start_line["goal"].get<std::string>()));
  }
  int max_steps = 0, max_tools = 0;
  if (run.start) {
    max_steps = start_line["budgets"]["max_steps"].get<int>();
    max_tools = start_line["budgets"]["max_tool_calls"].get<int>();
    attrs.push_back(Int(absl::StrCat(kNs, "budget.max_steps"), max_steps));
    attrs.push_back(Int(absl::StrCat(kNs, "budget.max_tool_calls"), max_tools));
  }
  json status = Status(kStatusUnset, "");
  if (run.end) {
    const int steps = end_line["steps"].get<int>();
    const int tool_calls = end_line["tool_calls"].get<int>();
    const std::string stop = run.stop_reason();
    attrs.push_back(Str(absl::StrCat(kNs, "stop_reason"), stop));
    attrs.push_back(Str(absl::StrCat(kNs, "stop_detail"), end_line.value("stop_detail", "")));
    attrs.push_back(Int(absl::StrCat(kNs, "steps"), steps));
    attrs.push_back(Int(absl::StrCat(kNs, "tool_calls"), tool_calls));
    if (run.start) {
      attrs.push_back(Int(absl::StrCat(kNs, "budget.steps_left"), max_steps - steps));
      attrs.push_back(Int(absl::StrCat(kNs, "budget.tools_left"), max_tools - tool_calls));
    }
    if (end_line.contains("answer") && end_line["answer"].is_string()) {
      attrs.push_back(Str(absl::StrCat(kNs, "answer"), end_line["answer"].get<std::string>()));
    }
    if (stop != "done") {
      attrs.push_back(Str("error.type", stop));
      status = Status(kStatusError, end_line.value("stop_detail", ""));
    }
  }
  spans.push_back({{"traceId", OtelTraceId(run.run_id)},
                   {"spanId", OtelSpanId(run.run_id, 0)},
                   {"name", "invoke_agent"},
                   {"kind", kSpanKindInternal},
                   {"startTimeUnixNano", std::to_string(run_start)},
                   {"endTimeUnixNano", std::to_string(run_end)},
                   {"attributes", attrs},
                   {"status", status}});
  for (json& s : step_spans) spans.push_back(std::move(s));
}

}  // namespace

json ToOtlpJson(const TraceSet& set) {
  json spans = json::array();
  for (const RunRecord& run : set.runs) AddRunSpans(run, spans);
  json resource = {{"attributes", json::array({Str("service.name", "sandboxed_agent"),
                                                Str("telemetry.sdk.name", "sandboxed_agent.observe"),
                                                Str("telemetry.sdk.language", "cpp")})}};
  json scope = {{"name", "sandboxed_agent.observe"}, {"version", "1"}};
  return {{"resourceSpans",
           json::array({{{"resource", resource},
                         {"scopeSpans", json::array({{{"scope", scope}, {"spans", spans}}})}}})}};
}

}  // namespace agent::observe
