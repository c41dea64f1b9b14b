// A workspace with the built-in agent tools wired to it, for the red-team cases that go through the
// agent's registry (submission, and the agent-level output cases).
//
// Test-only. One fixture per case; not thread-safe.
#ifndef REDTEAM_AGENT_TESTING_H_
#define REDTEAM_AGENT_TESTING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/registry.h"
#include "agent/state.h"
#include "nlohmann/json.hpp"
#include "redteam/testing.h"
#include "sandbox/workspace.h"

namespace redteam {

class AgentWorkspace {
 public:
  AgentWorkspace();

  // (Re)builds the registry with the test command `argv` (run from the root) and its timeout.
  // False when the workspace or the tools could not be set up.
  bool Configure(std::vector<std::string> test_argv, absl::Duration timeout = absl::Seconds(10),
                 uint64_t output_cap = 8 << 10);

  // Calls `tool` through the registry and records the result in the session, as the loop does.
  nlohmann::json Call(const std::string& tool, const nlohmann::json& args);

  // The error code of an envelope ("EPERM"), or "OK" for a success.
  static std::string Code(const nlohmann::json& envelope);

  const std::string& root() const { return root_; }
  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }
  agent::State& state() { return state_; }

 private:
  ScratchDir dir_{"agent"};
  std::string root_;
  std::optional<sandbox::Workspace> workspace_;
  std::optional<agent::Registry> registry_;
  agent::State state_;
};

}  // namespace redteam

#endif  // REDTEAM_AGENT_TESTING_H_
