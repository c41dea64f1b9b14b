// The tool contract (seed 13.3.2): a ToolSpec names what a tool does, what input it takes, which
// exit to the world it uses (effect), whether repeating it is safe, which scope authorises it, and
// an optional precondition checked before its handler.
//
// Thread-safety: ToolSpecs are immutable values; handlers run on the caller's thread.
#ifndef AGENT_TOOL_H_
#define AGENT_TOOL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/envelope.h"
#include "agent/state.h"
#include "nlohmann/json.hpp"

namespace sandbox {
class Workspace;
}  // namespace sandbox

namespace agent {

enum class Effect { kRead, kWrite, kExec, kControl };
enum class Idempotency { kIdempotent, kNotIdempotent };

// "read", "write", "exec", "control" / "idempotent", "not_idempotent".
const char* EffectName(Effect effect);
const char* IdempotencyName(Idempotency idempotency);

// How test.run runs the workspace's tests.
struct TestCommand {
  std::vector<std::string> argv;               // Run from the workspace root; empty: not configured.
  absl::Duration timeout = absl::Seconds(60);  // Wall clock; the runner kills the group after it.
  uint64_t output_cap = 8 << 10;               // Bytes of stdout and of stderr put in the envelope.
  uint64_t log_cap = 1 << 20;                  // Bytes of each stream the runner keeps for the log.
};

// What handlers may reach: the workspace (the filesystem exit) and the test command (the process
// exit, through the sandbox runner). Not owned.
struct ToolEnv {
  const sandbox::Workspace* workspace = nullptr;
  TestCommand test;
};

// What a handler or precondition sees. The handler may change the state (patch.apply bumps the world
// version, task.finish marks the task done); the session entry is added by the caller.
struct ToolContext {
  State& state;
  const ToolEnv& env;
};

using ToolHandler = std::function<absl::StatusOr<ToolOutput>(ToolContext& ctx,
                                                             const nlohmann::json& args)>;
// OK when the tool may run now; otherwise the error the envelope carries (usually EPRECONDITION).
using ToolPrecondition = std::function<absl::Status(const ToolContext& ctx,
                                                    const nlohmann::json& args)>;

struct ToolSpec {
  std::string name;         // "fs.read".
  std::string description;  // One line for a model's tool list.
  nlohmann::json input_schema = nlohmann::json::object();  // The JSON Schema subset (agent/schema.h).
  Effect effect = Effect::kRead;
  Idempotency idempotency = Idempotency::kIdempotent;
  std::string auth_scope;  // e.g. "workspace:read"; the registry must have it granted.
  ToolHandler handler;
  ToolPrecondition precondition;  // Optional.
  nlohmann::json cost = nlohmann::json::object();  // Static cost, e.g. {"units": 1}.
};

}  // namespace agent

#endif  // AGENT_TOOL_H_
