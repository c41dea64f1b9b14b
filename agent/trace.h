// The JSONL trace (seed 13.7.1-13.7.2): one JSON object per line, each written with whole-line
// write(2) calls as soon as it exists, so a run killed at any point leaves a file whose every complete
// line parses.
//
// Line types (field `type`); every line also carries `trace_version` (kTraceVersion) and `run_id`, so
// several runs can share one file (issue 8 groups by run_id):
//   run_start: run_id, started_at, goal, policy, budgets{max_steps, max_tool_calls},
//              no_progress_window, tools[], state (the initial snapshot), and the caller's extras
//              (run_demo: workspace, test_command)
//   step:      step, decision{tool, args}, result (the envelope), started_at (RFC 3339, ms; the
//              result's observed_at is the end), duration_ms (the tool call, to the microsecond),
//              budget_before{steps_left, tools_left} (what was left before this step spent anything),
//              state (the snapshot after the state update: files, world_version, done, answer, steps,
//              tool_calls, messages), fingerprint
//   run_end:   stop_reason, stop_detail, steps, tool_calls, trace_steps, answer, ended_at,
//              pending_decision (the decision a spent tool budget kept from running, else null)
//
// The seed's jq commands read step lines as printed. Over the whole file, `.decision.tool` and the
// budget columns are null for the run_start and run_end lines, so command 1 prints one extra
// "2 null" row and command 3 two empty rows; `select(.type == "step")` gives the step lines alone.
// Selections on `.step` or `.result` (command 2, the CI's jq -e checks) match step lines only.
// Debian 12's jq 1.6 takes `jq -e`'s exit status from the last input line alone, which is run_end, so
// `jq -e 'select(<step filter>)' TRACE` prints the match yet exits 4; assert with
// `jq -e -s 'any(.[]; <step filter>)' TRACE` instead (agent/demo_test.sh does).
//
// Thread-safety: a TraceWriter is used by one run on one thread.
#ifndef AGENT_TRACE_H_
#define AGENT_TRACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace agent {

inline constexpr int kTraceVersion = 1;

class TraceWriter {
 public:
  // Opens (creating) `path` for appending; with truncate, an existing file is emptied first.
  static absl::StatusOr<TraceWriter> Open(const std::string& path, bool truncate);

  TraceWriter(TraceWriter&& other) noexcept;
  TraceWriter& operator=(TraceWriter&& other) noexcept;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  // Writes `line` (an object) as one line, stamped with trace_version, type and run_id. Invalid UTF-8
  // in strings is replaced by U+FFFD rather than failing the run.
  absl::Status Write(const std::string& type, const std::string& run_id, nlohmann::json line);

  const std::string& path() const { return path_; }

 private:
  TraceWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::string path_;
};

}  // namespace agent

#endif  // AGENT_TRACE_H_
