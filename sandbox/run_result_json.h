// The JSON form of a RunResult: what `sandbox --json` prints and what the agent's tool envelope embeds.
//
//   {"exit_code": 0 | null, "term_signal": 9 | null, "signal_name": "SIGKILL" | null,
//    "timed_out": false, "cancelled": false, "wall_ms": 12.5, "user_cpu_ms": 1.0,
//    "system_cpu_ms": 2.0, "peak_rss_kb": 1234, "pid": 42, "pgid": 42,
//    "stdout": {"data": "...", "truncated": false, "kept_bytes": 3, "total_bytes": 3,
//               "utf8_lossy": false},
//    "stderr": {...}, "limits_in_force": ["RLIMIT_CPU=10:11", ...],
//    "layers_in_force": ["session", ...]}
//
// Captured output is bytes; JSON strings are UTF-8. Invalid sequences become U+FFFD and the stream says
// "utf8_lossy": true, so the JSON always serialises and a reader knows the text is not byte-exact.
//
// Thread-safety: pure functions.
#ifndef SANDBOX_RUN_RESULT_JSON_H_
#define SANDBOX_RUN_RESULT_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "sandbox/runner.h"

namespace sandbox {

// The result as a JSON object (shape above).
nlohmann::json RunResultToJson(const RunResult& result);

// {"code": "ENOENT", "message": ..., "retryable": false, "suggested_action": "fix_args"} for a
// failed Run (or any sandbox error).
nlohmann::json ErrorToJson(const absl::Status& status);

// "SIGKILL" for the signals a run commonly ends with; "SIG<n>" for others.
std::string SignalName(int signal);

// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD; sets *lossy when it replaced any.
std::string ToValidUtf8(absl::string_view bytes, bool* lossy);

}  // namespace sandbox

#endif  // SANDBOX_RUN_RESULT_JSON_H_
