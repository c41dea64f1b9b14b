#include "agent/envelope.h"

#include "sandbox/errors.h"

namespace agent {

using nlohmann::json;

std::string Rfc3339Millis(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

json SuccessEnvelope(const ToolOutput& output, absl::Time observed_at) {
  json refs = json::array();
  for (const Ref& r : output.refs) refs.push_back({{"path", r.path}, {"sha256", r.sha256}});
  return {
      {"ok", true},
      {"data", output.data},
      {"error", nullptr},
      {"refs", refs},
      {"cost", output.cost.is_object() ? output.cost : json::object()},
      {"observed_at", Rfc3339Millis(observed_at)},
  };
}

json ErrorEnvelope(const absl::Status& status, const json& cost, absl::Time observed_at) {
  absl::Status s = status.ok() ? sandbox::MakeError(sandbox::ErrorCode::kEINTERNAL,
                                                    "a tool failed with an OK status")
                               : status;
  const sandbox::ErrorInfo& info = sandbox::Info(sandbox::CodeOf(s));
  return {
      {"ok", false},
      {"data", nullptr},
      {"error",
       {
           {"code", std::string(info.name)},
           {"message", std::string(s.message())},
           {"retryable", info.retryable},
           {"suggested_action", std::string(info.suggested_action)},
       }},
      {"refs", json::array()},
      {"cost", cost.is_object() ? cost : json::object()},
      {"observed_at", Rfc3339Millis(observed_at)},
  };
}

json Observation(const json& envelope) {
  json out = envelope;
  if (out.is_object()) {
    out.erase("observed_at");
    out.erase("cost");
  }
  return out;
}

}  // namespace agent
