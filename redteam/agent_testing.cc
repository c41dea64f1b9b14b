#include "redteam/agent_testing.h"

#include <sys/stat.h>

#include <utility>

#include "agent/builtin_tools.h"

namespace redteam {

AgentWorkspace::AgentWorkspace() : root_(dir_.Join("workspace")) {
  mkdir(root_.c_str(), 0755);
}

bool AgentWorkspace::Configure(std::vector<std::string> test_argv, absl::Duration timeout,
                               uint64_t output_cap) {
  if (!workspace_.has_value()) {
    absl::StatusOr<sandbox::Workspace> ws =
        sandbox::Workspace::Open(root_, agent::AgentWorkspaceOptions());
    if (!ws.ok()) return false;
    workspace_.emplace(*std::move(ws));
  }
  agent::ToolEnv env;
  env.workspace = &*workspace_;
  env.test.argv = std::move(test_argv);
  env.test.timeout = timeout;
  env.test.output_cap = output_cap;
  registry_.emplace(env, agent::BuiltinScopes());
  return agent::RegisterBuiltinTools(*registry_).ok();
}

nlohmann::json AgentWorkspace::Call(const std::string& tool, const nlohmann::json& args) {
  nlohmann::json result = registry_->Call(state_, tool, args);
  state_.AddToolResult(tool, args, result);
  return result;
}

std::string AgentWorkspace::Code(const nlohmann::json& envelope) {
  if (envelope.value("ok", false)) return "OK";
  if (!envelope.contains("error") || !envelope["error"].is_object()) return "<no error object>";
  return envelope["error"].value("code", "<no code>");
}

}  // namespace redteam
