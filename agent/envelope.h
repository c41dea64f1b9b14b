// The result envelope every tool call returns, success or not (seed 13.3.2, DESIGN.md "Contracts"):
//   {ok, data, error{code, message, retryable, suggested_action}, refs[{path, sha256}], cost,
//    observed_at}
// with observed_at in RFC 3339 UTC with milliseconds. The error fields come only from the table in
// sandbox/errors.h (CodeOf + Info): a call site names a code and writes a message, nothing else.
//
// Thread-safety: pure functions.
#ifndef AGENT_ENVELOPE_H_
#define AGENT_ENVELOPE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace agent {

// A content reference: where to fetch more, and the hash of what is there.
struct Ref {
  std::string path;    // Workspace-relative.
  std::string sha256;  // Lower-case hex.
};

// What a tool handler returns on success.
struct ToolOutput {
  nlohmann::json data = nlohmann::json::object();
  std::vector<Ref> refs;
  nlohmann::json cost = nlohmann::json::object();  // Measured cost (e.g. wall_ms), merged into the
                                                   // tool's static cost.
};

// "2026-10-19T01:43:46.852Z".
std::string Rfc3339Millis(absl::Time t);

// {ok: true, data, error: null, refs, cost, observed_at}.
nlohmann::json SuccessEnvelope(const ToolOutput& output, absl::Time observed_at);

// {ok: false, data: null, error{...} from the table row of CodeOf(status), refs: [], cost,
// observed_at}. `status` must not be OK (an OK status is reported as EINTERNAL, a bug).
nlohmann::json ErrorEnvelope(const absl::Status& status, const nlohmann::json& cost,
                             absl::Time observed_at);

// The envelope without its measurements (observed_at, cost): what the no-progress fingerprint and
// replay comparisons look at.
nlohmann::json Observation(const nlohmann::json& envelope);

}  // namespace agent

#endif  // AGENT_ENVELOPE_H_
