// The tool registry: the one door through which the loop (and the single-tool command) calls a tool.
//
// Call() runs, in this order: scope -> schema -> precondition -> handler. The first failing stage
// returns the structured envelope and later stages do not run. Nothing escapes as an exception: a
// handler that throws (nlohmann::json or otherwise) becomes EINTERNAL.
//
// Thread-safety: Register before the first Call; Call is const but runs handlers that mutate the
// caller's State, so one registry serves one run at a time.
#ifndef AGENT_REGISTRY_H_
#define AGENT_REGISTRY_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/tool.h"
#include "nlohmann/json.hpp"

namespace agent {

// What the loop calls tools through: the registry, or a stand-in such as replay's table of recorded
// results (issue 8), which must then also apply the recorded state changes (world version, done).
class ToolCaller {
 public:
  virtual ~ToolCaller() = default;
  // Calls `tool` with `args`; always returns an envelope (see envelope.h).
  virtual nlohmann::json Call(State& state, const std::string& tool,
                              const nlohmann::json& args) const = 0;
  // The tool names, sorted, for the trace header.
  virtual std::vector<std::string> Names() const = 0;
};

class Registry : public ToolCaller {
 public:
  // `granted_scopes`: the auth scopes this run holds; a tool needing another scope is refused (EPERM).
  Registry(ToolEnv env, std::set<std::string> granted_scopes);

  // Adds a tool. EINVAL for a duplicate or empty name, no handler, no auth scope, or an input schema
  // CheckSchema rejects (so an unsupported keyword never passes silently).
  absl::Status Register(ToolSpec spec);

  // Calls `tool` with `args`; always returns an envelope (see envelope.h).
  nlohmann::json Call(State& state, const std::string& tool,
                      const nlohmann::json& args) const override;

  // The registered tool, or nullptr.
  const ToolSpec* Find(const std::string& name) const;

  // Registered tool names, sorted.
  std::vector<std::string> Names() const override;

  // The tool list a policy or model sees: [{name, description, input_schema, effect, idempotency,
  // auth_scope}].
  nlohmann::json Describe() const;

  const ToolEnv& env() const { return env_; }

  // For tests: the clock stamping observed_at.
  void set_clock(std::function<absl::Time()> clock) { clock_ = std::move(clock); }

 private:
  nlohmann::json CallStages(State& state, const ToolSpec& spec, const nlohmann::json& args) const;

  ToolEnv env_;
  std::set<std::string> granted_scopes_;
  std::map<std::string, ToolSpec> tools_;
  std::function<absl::Time()> clock_;
};

}  // namespace agent

#endif  // AGENT_REGISTRY_H_
