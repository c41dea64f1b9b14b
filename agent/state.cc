#include "agent/state.h"

namespace agent {

absl::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "";
    case StopReason::kDone: return "done";
    case StopReason::kMaxSteps: return "max_steps";
    case StopReason::kMaxToolCalls: return "max_tool_calls";
    case StopReason::kNoProgress: return "no_progress";
    case StopReason::kError: return "error";
  }
  return "error";
}

bool ControlState::SpendStep() {
  if (steps >= max_steps) return false;
  ++steps;
  return true;
}

bool ControlState::SpendTool() {
  if (tool_calls >= max_tool_calls) return false;
  ++tool_calls;
  return true;
}

void State::AddToolResult(const std::string& tool, const nlohmann::json& args,
                          const nlohmann::json& result) {
  session.messages.push_back(SessionEntry{control.steps, tool, args, result, world.version});
}

bool State::TestsPassedSinceLastWrite() const {
  // The most recent test.run decides (a later failure overrides an earlier pass); it must have run at
  // the current world version, i.e. after the last write.
  for (auto it = session.messages.rbegin(); it != session.messages.rend(); ++it) {
    if (it->world_version != world.version) return false;
    if (it->tool != "test.run") continue;
    const nlohmann::json& r = it->result;
    return r.value("ok", false) && r.contains("data") && r["data"].is_object() &&
           r["data"].value("passed", false);
  }
  return false;
}

nlohmann::json State::Snapshot() const {
  return {
      {"files", world.files},
      {"world_version", world.version},
      {"done", task.done},
      {"answer", task.answer ? nlohmann::json(*task.answer) : nlohmann::json(nullptr)},
      {"steps", control.steps},
      {"tool_calls", control.tool_calls},
      {"messages", session.messages.size()},
  };
}

}  // namespace agent
