#include "agent/scripted_policy.h"

#include "absl/strings/str_cat.h"
#include "agent/demo_project.h"
#include "sandbox/errors.h"

namespace agent {
namespace {

using nlohmann::json;

// The most recent session entry for `tool`, or nullptr.
const SessionEntry* Last(const State& state, absl::string_view tool) {
  for (auto it = state.session.messages.rbegin(); it != state.session.messages.rend(); ++it) {
    if (it->tool == tool) return &*it;
  }
  return nullptr;
}

bool Ok(const SessionEntry* e) { return e != nullptr && e->result.value("ok", false); }

}  // namespace

absl::StatusOr<ScriptMode> ParseScriptMode(absl::string_view name) {
  if (name == "good") return ScriptMode::kGood;
  if (name == "loop") return ScriptMode::kLoop;
  if (name == "escape") return ScriptMode::kEscape;
  return sandbox::MakeError(sandbox::ErrorCode::kEINVAL,
                            absl::StrCat("unknown mode '", name, "' (good, loop, escape)"));
}

std::string ScriptedPolicy::Name() const {
  switch (mode_) {
    case ScriptMode::kGood: return "scripted:good";
    case ScriptMode::kLoop: return "scripted:loop";
    case ScriptMode::kEscape: return "scripted:escape";
  }
  return "scripted";
}

absl::StatusOr<Action> ScriptedPolicy::Next(const State& state) {
  switch (mode_) {
    case ScriptMode::kLoop:
      return Action{"fs.read", {{"path", kDemoSourcePath}}};
    case ScriptMode::kEscape:
      return Action{"fs.read", {{"path", kDemoSecretRelative}}};
    case ScriptMode::kGood:
      return NextGood(state);
  }
  return sandbox::MakeError(sandbox::ErrorCode::kEINTERNAL, "unknown script mode");
}

absl::StatusOr<Action> ScriptedPolicy::NextGood(const State& state) const {
  const SessionEntry* read = Last(state, "fs.read");
  if (!Ok(read)) {
    if (read != nullptr) {
      return sandbox::MakeError(sandbox::ErrorCode::kEPRECONDITION,
                                absl::StrCat("reading ", kDemoSourcePath, " failed: ",
                                             read->result["error"].value("message", "")));
    }
    return Action{"fs.read", {{"path", kDemoSourcePath}}};
  }
  const SessionEntry* patch = Last(state, "patch.apply");
  if (!Ok(patch)) {
    if (patch != nullptr) {
      return sandbox::MakeError(sandbox::ErrorCode::kEPRECONDITION,
                                absl::StrCat("the patch was refused: ",
                                             patch->result["error"].value("code", ""), " ",
                                             patch->result["error"].value("message", "")));
    }
    const std::string content = read->result["data"].value("content", "");
    if (content.find(kDemoBuggyLine) == std::string::npos) {
      return sandbox::MakeError(sandbox::ErrorCode::kEPRECONDITION,
                                absl::StrCat(kDemoSourcePath, " does not contain the known bug '",
                                             kDemoBuggyLine, "'; the script has no other plan"));
    }
    return Action{"patch.apply",
                  {{"path", kDemoSourcePath}, {"old", kDemoBuggyLine}, {"new", kDemoFixedLine}}};
  }
  const SessionEntry* test = Last(state, "test.run");
  if (test == nullptr || test->world_version != state.world.version) {
    return Action{"test.run", json::object()};
  }
  if (!state.TestsPassedSinceLastWrite()) {
    return sandbox::MakeError(sandbox::ErrorCode::kEPRECONDITION,
                              "the tests still fail after the patch; the script has no other plan");
  }
  return Action{"task.finish",
                {{"answer", absl::StrCat("fixed add() in ", kDemoSourcePath, ": '", kDemoBuggyLine,
                                         "' -> '", kDemoFixedLine, "'; sh test.sh passes")}}};
}

}  // namespace agent
