// ScriptedPolicy: the deterministic stand-in for a model (seed 13.3.3), with the seed's three modes
// over the demo project (agent/demo.h):
//   good   - read calc.sh, patch the subtraction into an addition, run the tests, finish once they
//            pass (4 steps);
//   loop   - reads calc.sh forever (the no-progress brake must stop it);
//   escape - reads ../secret.txt forever (the path policy must refuse it at the first step).
// It decides from the session (the observations), like a model would, not from a step counter.
//
// Thread-safety: stateless apart from its mode; one run at a time.
#ifndef AGENT_SCRIPTED_POLICY_H_
#define AGENT_SCRIPTED_POLICY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/policy.h"

namespace agent {

enum class ScriptMode { kGood, kLoop, kEscape };

// "good" / "loop" / "escape"; EINVAL for anything else.
absl::StatusOr<ScriptMode> ParseScriptMode(absl::string_view name);

class ScriptedPolicy : public Policy {
 public:
  explicit ScriptedPolicy(ScriptMode mode) : mode_(mode) {}

  absl::StatusOr<Action> Next(const State& state) override;
  std::string Name() const override;

 private:
  absl::StatusOr<Action> NextGood(const State& state) const;

  ScriptMode mode_;
};

}  // namespace agent

#endif  // AGENT_SCRIPTED_POLICY_H_
