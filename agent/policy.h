// The policy interface: what the loop asks for the next action. A model adapter implements the same
// interface later (it translates, it does not execute: seed 13.3.3); the loop, tools and trace do not
// change.
//
// Thread-safety: a Policy serves one run on one thread.
#ifndef AGENT_POLICY_H_
#define AGENT_POLICY_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/state.h"
#include "nlohmann/json.hpp"

namespace agent {

struct Action {
  std::string tool;
  nlohmann::json args = nlohmann::json::object();
};

class Policy {
 public:
  virtual ~Policy() = default;

  // The next action given everything the run has seen. An error stops the run with stop reason
  // "error" (e.g. a model adapter that cannot reach its model, or a script with no plan left).
  virtual absl::StatusOr<Action> Next(const State& state) = 0;

  // A short identification for the trace header, e.g. "scripted:good".
  virtual std::string Name() const = 0;
};

}  // namespace agent

#endif  // AGENT_POLICY_H_
