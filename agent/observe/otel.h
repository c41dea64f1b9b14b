// `trace otel`: exports runs as one OTLP/JSON document (the body of an OTLP/HTTP
// ExportTraceServiceRequest, which a collector's otlpjsonfile receiver or /v1/traces ingests):
//   resourceSpans[{resource{attributes}, scopeSpans[{scope{name, version}, spans[...]}]}]
//
// Spans follow the OpenTelemetry GenAI semantic conventions (gen-ai-agent-spans, execute_tool):
//   - one `invoke_agent` span per run (kind INTERNAL: the agent runs in-process), with
//     gen_ai.operation.name "invoke_agent" and gen_ai.conversation.id = run_id;
//   - one `execute_tool {gen_ai.tool.name}` span per step, child of the run span, with
//     gen_ai.operation.name "execute_tool", gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type;
//     a failed call has error.type = the envelope's error code and status ERROR.
// Our own attributes live under `sandboxed_agent.` (budget before each step, stop reason, policy...).
// A run that did not end with "done" has error.type = its stop reason and status ERROR.
//
// Ids are derived, not random, so the export is reproducible and testable: traceId is the first 32
// hex digits of sha256("otel-trace:" + run_id), spanId the first 16 of
// sha256("otel-span:" + run_id + ":" + step) with step 0 for the run span. Times come from the trace:
// a step starts at its started_at and lasts duration_ms (a step line without started_at ends at its
// result's observed_at instead); no step starts before its run, which spans started_at..ended_at
// (or its steps, for a run without run_end). Times are
// nanoseconds since the epoch, as decimal strings (OTLP/JSON encodes 64-bit integers as strings).
//
// Thread-safety: pure functions.
#ifndef AGENT_OBSERVE_OTEL_H_
#define AGENT_OBSERVE_OTEL_H_

#include <string>

#include "agent/observe/trace_reader.h"
#include "nlohmann/json.hpp"

namespace agent::observe {

// The OTLP/JSON document for every run in `set`.
nlohmann::json ToOtlpJson(const TraceSet& set);

// The derived ids (exposed for tests).
std::string OtelTraceId(const std::string& run_id);
std::string OtelSpanId(const std::string& run_id, int step);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_OTEL_H_
