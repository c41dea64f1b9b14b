#include "agent/registry.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/schema.h"
#include "sandbox/errors.h"

namespace agent {

using nlohmann::json;
using sandbox::ErrorCode;
using sandbox::MakeError;

const char* EffectName(Effect effect) {
  switch (effect) {
    case Effect::kRead: return "read";
    case Effect::kWrite: return "write";
    case Effect::kExec: return "exec";
    case Effect::kControl: return "control";
  }
  return "control";
}

const char* IdempotencyName(Idempotency idempotency) {
  return idempotency == Idempotency::kIdempotent ? "idempotent" : "not_idempotent";
}

Registry::Registry(ToolEnv env, std::set<std::string> granted_scopes)
    : env_(std::move(env)), granted_scopes_(std::move(granted_scopes)), clock_(&absl::Now) {}

absl::Status Registry::Register(ToolSpec spec) {
  if (spec.name.empty()) return MakeError(ErrorCode::kEINVAL, "a tool needs a name");
  if (tools_.count(spec.name) != 0) {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("tool '", spec.name, "' is already registered"));
  }
  if (!spec.handler) {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("tool '", spec.name, "' has no handler"));
  }
  if (spec.auth_scope.empty()) {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("tool '", spec.name, "' has no auth scope"));
  }
  if (absl::Status s = CheckSchema(spec.input_schema); !s.ok()) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("tool '", spec.name, "' input ", s.message()));
  }
  std::string name = spec.name;
  tools_.emplace(std::move(name), std::move(spec));
  return absl::OkStatus();
}

const ToolSpec* Registry::Find(const std::string& name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, spec] : tools_) names.push_back(name);
  return names;
}

json Registry::Describe() const {
  json out = json::array();
  for (const auto& [name, spec] : tools_) {
    out.push_back({{"name", name},
                   {"description", spec.description},
                   {"input_schema", spec.input_schema},
                   {"effect", EffectName(spec.effect)},
                   {"idempotency", IdempotencyName(spec.idempotency)},
                   {"auth_scope", spec.auth_scope}});
  }
  return out;
}

json Registry::CallStages(State& state, const ToolSpec& spec, const json& args) const {
  // 1. Scope: the run must hold the tool's authorisation before anything looks at the arguments.
  if (granted_scopes_.count(spec.auth_scope) == 0) {
    return ErrorEnvelope(
        MakeError(ErrorCode::kEPERM, absl::StrCat("scope '", spec.auth_scope, "' needed by ",
                                                  spec.name, " is not granted to this run")),
        spec.cost, clock_());
  }
  // 2. Schema.
  std::vector<SchemaViolation> violations = Validate(spec.input_schema, args);
  if (!violations.empty()) {
    return ErrorEnvelope(
        MakeError(ErrorCode::kEINVAL, absl::StrCat("invalid arguments for ", spec.name, ": ",
                                                   FormatViolations(violations))),
        spec.cost, clock_());
  }
  ToolContext ctx{state, env_};
  // 3. Precondition.
  if (spec.precondition) {
    if (absl::Status s = spec.precondition(ctx, args); !s.ok()) {
      return ErrorEnvelope(s, spec.cost, clock_());
    }
  }
  // 4. Handler.
  absl::StatusOr<ToolOutput> out = spec.handler(ctx, args);
  if (!out.ok()) return ErrorEnvelope(out.status(), spec.cost, clock_());
  ToolOutput merged = *std::move(out);
  json cost = spec.cost;
  if (merged.cost.is_object()) {
    for (const auto& [k, v] : merged.cost.items()) cost[k] = v;
  }
  merged.cost = cost;
  return SuccessEnvelope(merged, clock_());
}

json Registry::Call(State& state, const std::string& tool, const json& args) const {
  const ToolSpec* spec = Find(tool);
  if (spec == nullptr) {
    return ErrorEnvelope(
        MakeError(ErrorCode::kEINVAL, absl::StrCat("unknown tool '", tool, "'; known tools: ",
                                                   absl::StrJoin(Names(), ", "))),
        json::object(), clock_());
  }
  // No exception crosses this line: nlohmann::json throws on a wrong-type access or invalid UTF-8,
  // and a handler may use code that throws std::bad_alloc.
  try {
    return CallStages(state, *spec, args);
  } catch (const std::exception& e) {
    return ErrorEnvelope(MakeError(ErrorCode::kEINTERNAL,
                                   absl::StrCat(tool, " threw an exception: ", e.what())),
                         spec->cost, clock_());
  } catch (...) {
    return ErrorEnvelope(MakeError(ErrorCode::kEINTERNAL,
                                   absl::StrCat(tool, " threw a non-standard exception")),
                         spec->cost, clock_());
  }
}

}  // namespace agent
