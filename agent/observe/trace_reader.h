// Reads the agent's JSONL trace (agent/trace.h) into runs, for the observe commands (issue 8).
//
// Every line must be a JSON object with trace_version == agent::kTraceVersion, a `type` of run_start,
// step or run_end, a run_id, and the fields its type needs; otherwise reading fails with an error
// naming the file and the line number. One exception, because a killed agent leaves it: a last line
// without its newline that does not parse is reported as a warning and skipped (seed 13.7, DESIGN.md
// "A killed agent leaves a valid prefix").
//
// Lines are grouped by run_id, runs in the order their first line appears; several files can be
// read into one TraceSet (a run continued in a second file joins its run).
//
// Thread-safety: pure functions over values.
#ifndef AGENT_OBSERVE_TRACE_READER_H_
#define AGENT_OBSERVE_TRACE_READER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace agent::observe {

// One `step` line.
struct StepRecord {
  std::string source;  // "file:line", for messages.
  int step = 0;
  std::string tool;
  nlohmann::json args;    // decision.args.
  nlohmann::json result;  // The envelope as recorded.
  double duration_ms = 0;
  int steps_left = 0;  // budget_before.
  int tools_left = 0;
  nlohmann::json state;  // The snapshot after the step (object).
  std::string fingerprint;
  std::string started_at;  // RFC 3339 when the call started; "" in lines written before it existed.

  bool ok() const;
  // result.error.code, or "" for a success.
  std::string error_code() const;
};

// One run: its header, steps and footer as far as the trace has them.
struct RunRecord {
  std::string run_id;
  std::optional<nlohmann::json> start;  // The run_start line.
  std::vector<StepRecord> steps;        // In file order.
  std::optional<nlohmann::json> end;    // The run_end line.

  // run_start.policy, or "".
  std::string policy() const;
  // run_end.stop_reason, or "" when the run has no run_end line.
  std::string stop_reason() const;
};

struct TraceSet {
  std::vector<RunRecord> runs;
  std::vector<std::string> warnings;  // Not fatal: a truncated last line, a run without a header...
  int lines = 0;                      // Lines read (complete ones).

  // The run with `run_id`, or nullptr.
  const RunRecord* Find(absl::string_view run_id) const;
};

// Parses `content` (the text of one trace file called `name` in messages) into `set`.
// InvalidArgument "name:LINE: why" for the first bad line.
absl::Status ParseTrace(absl::string_view name, absl::string_view content, TraceSet& set);

// Reads and parses `path` into `set`. NotFound / PermissionDenied style errors name the path.
absl::Status ReadTraceFile(const std::string& path, TraceSet& set);

// Reads several files into one set.
absl::StatusOr<TraceSet> ReadTraceFiles(const std::vector<std::string>& paths);

// Picks one run: the one named `run_id`, or with an empty id the only run (InvalidArgument when there
// are several, listing their ids, or none).
absl::StatusOr<const RunRecord*> SelectRun(const TraceSet& set, const std::string& run_id);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_TRACE_READER_H_
