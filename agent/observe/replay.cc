#include "agent/observe/replay.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/envelope.h"
#include "agent/loop.h"
#include "agent/registry.h"
#include "agent/scripted_policy.h"
#include "agent/state.h"
#include "sandbox/errors.h"

namespace agent::observe {

using nlohmann::json;
using sandbox::ErrorCode;
using sandbox::MakeError;

absl::StatusOr<std::unique_ptr<Policy>> MakeRecordedPolicy(const std::string& name) {
  constexpr absl::string_view kScripted = "scripted:";
  if (absl::StartsWith(name, kScripted)) {
    absl::StatusOr<ScriptMode> mode = ParseScriptMode(absl::string_view(name).substr(kScripted.size()));
    if (mode.ok()) return std::unique_ptr<Policy>(new ScriptedPolicy(*mode));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot replay policy '", name,
                   "': replay knows scripted:good, scripted:loop and scripted:escape"));
}

std::string DecisionText(const json& decision) {
  if (!decision.is_object()) return decision.dump();
  if (decision.contains("tool")) {
    return absl::StrCat(decision.value("tool", ""), " ",
                        decision.contains("args") ? decision["args"].dump(-1, ' ', false,
                                                                          json::error_handler_t::replace)
                                                  : "{}");
  }
  return decision.dump(-1, ' ', false, json::error_handler_t::replace);
}

json ReplayReport::ToJson() const {
  json out = {{"run_id", run_id},
              {"policy", policy},
              {"match", match()},
              {"recorded_steps", recorded_steps},
              {"matched_steps", matched_steps},
              {"results_served", results_served},
              {"recording_complete", recording_complete},
              {"recorded_stop_reason", recorded_stop_reason},
              {"replayed_stop_reason", replayed_stop_reason},
              {"divergence", nullptr}};
  if (divergence) {
    out["divergence"] = {{"step", divergence->step},
                         {"kind", divergence->kind},
                         {"recorded", divergence->recorded},
                         {"replayed", divergence->replayed}};
  }
  return out;
}

std::string ReplayReport::ToText() const {
  if (match()) {
    return absl::StrCat("replay ", run_id, " (", policy, "): match, ", matched_steps, "/",
                        recorded_steps, " decisions, stop_reason ",
                        recording_complete ? replayed_stop_reason
                                           : "(recording has no run_end: prefix replayed)",
                        ", ", results_served, " recorded results served, 0 tools run\n");
  }
  return absl::StrCat("replay ", run_id, " (", policy, "): DIVERGED at step ", divergence->step,
                      " (", divergence->kind, ")\n  recorded: ", DecisionText(divergence->recorded),
                      "\n  replayed: ", DecisionText(divergence->replayed), "\n  ", matched_steps,
                      " of ", recorded_steps, " recorded decisions matched before it\n");
}

namespace {

// What the recorded-result tools and the comparing policy share: where in the recording the loop is.
struct Cursor {
  const RunRecord* run = nullptr;
  const StepRecord* current = nullptr;  // The recorded step whose decision the policy just matched.
  int served = 0;
  int matched = 0;
  bool exhausted = false;  // The recording (without run_end) ran out.
  std::optional<Divergence> divergence;
};

json DecisionJson(const Action& a) { return {{"tool", a.tool}, {"args", a.args}}; }

json DecisionJson(const StepRecord& s) { return {{"tool", s.tool}, {"args", s.args}}; }

absl::Status Diverged(Cursor& cursor, int step, std::string kind, json recorded, json replayed) {
  cursor.divergence = Divergence{step, std::move(kind), std::move(recorded), std::move(replayed)};
  return MakeError(ErrorCode::kEPRECONDITION, "replay diverged from the recording");
}

// The loop's step fingerprint, recomputed from what the replay saw, against the recorded one.
// Recordings without fingerprints are not checked.
absl::Status CheckFingerprint(Cursor& cursor, const SessionEntry& entry) {
  const size_t index = static_cast<size_t>(entry.step) - 1;
  if (entry.step < 1 || index >= cursor.run->steps.size()) return absl::OkStatus();
  const StepRecord& rec = cursor.run->steps[index];
  if (rec.fingerprint.empty()) return absl::OkStatus();
  std::string replayed = Fingerprint(Action{entry.tool, entry.args}, entry.result,
                                     entry.world_version);
  if (replayed == rec.fingerprint) return absl::OkStatus();
  return Diverged(cursor, entry.step, "fingerprint",
                  {{"fingerprint", rec.fingerprint}, {"decision", DecisionJson(rec)}},
                  {{"fingerprint", replayed}, {"world_version", entry.world_version}});
}

// Asks the recorded policy for each decision and holds it against the recording.
class ComparingPolicy : public Policy {
 public:
  ComparingPolicy(std::unique_ptr<Policy> inner, Cursor& cursor)
      : inner_(std::move(inner)), cursor_(cursor) {}

  std::string Name() const override { return inner_->Name(); }

  absl::StatusOr<Action> Next(const State& state) override {
    if (!state.session.messages.empty()) {
      if (absl::Status s = CheckFingerprint(cursor_, state.session.messages.back()); !s.ok()) {
        return s;
      }
    }
    cursor_.current = nullptr;
    const int step = state.control.steps;  // Already spent: 1 for the first decision.
    absl::StatusOr<Action> action = inner_->Next(state);
    json replayed = action.ok() ? DecisionJson(*action)
                                : json{{"policy_error", std::string(action.status().message())}};
    const std::vector<StepRecord>& steps = cursor_.run->steps;
    if (static_cast<size_t>(step) <= steps.size()) {
      const StepRecord& rec = steps[step - 1];
      if (!action.ok() || replayed != DecisionJson(rec)) {
        return Diverged(cursor_, step, "decision", DecisionJson(rec), replayed);
      }
      cursor_.current = &rec;
      ++cursor_.matched;
      return action;
    }
    // Past the recorded steps.
    const std::optional<json>& end = cursor_.run->end;
    if (!end) {
      cursor_.exhausted = true;
      return MakeError(ErrorCode::kEPRECONDITION, "the recording ends here");
    }
    const std::string stop = end->value("stop_reason", "");
    const json pending = end->contains("pending_decision") ? (*end)["pending_decision"] : json();
    if (pending.is_object() && stop == "max_tool_calls") {
      // The decision the spent tool budget kept from running: compared, then refused by the loop.
      if (!action.ok() || replayed != json{{"tool", pending.value("tool", "")},
                                           {"args", pending.value("args", json::object())}}) {
        return Diverged(cursor_, step, "decision", pending, replayed);
      }
      return action;
    }
    // The recorded run ended with the policy's error (the loop writes "policy: <message>"): the
    // replayed policy must give up the same way.
    if (stop == "error" && !action.ok() &&
        absl::EndsWith(end->value("stop_detail", ""), action.status().message())) {
      return action;
    }
    return Diverged(cursor_, step, "decision",
                    {{"stop_reason", stop}, {"stop_detail", end->value("stop_detail", "")}},
                    replayed);
  }

 private:
  std::unique_ptr<Policy> inner_;
  Cursor& cursor_;
};

// Applies the recorded state snapshot's world version, done and answer: what the real handler did
// to the state (patch.apply bumps the version, task.finish marks the task done).
void ApplyRecordedState(const json& st, State& state) {
  if (!st.is_object()) return;
  if (st.contains("world_version") && st["world_version"].is_number_unsigned()) {
    state.world.version = st["world_version"].get<uint64_t>();
  }
  if (st.contains("done") && st["done"].is_boolean()) state.task.done = st["done"].get<bool>();
  if (st.contains("answer") && st["answer"].is_string()) {
    state.task.answer = st["answer"].get<std::string>();
  }
}

// The loop's tool door during a replay: a table lookup. It hands back the recorded envelope of the
// step whose decision the policy just matched, byte for byte, and applies that step's recorded state
// changes. It has no workspace, runner or registry behind it: there is nothing it could execute.
class RecordedResults : public ToolCaller {
 public:
  RecordedResults(const RunRecord& run, Cursor& cursor) : cursor_(cursor) {
    std::set<std::string> names;
    if (run.start && run.start->contains("tools") && (*run.start)["tools"].is_array()) {
      for (const json& t : (*run.start)["tools"]) {
        if (t.is_string()) names.insert(t.get<std::string>());
      }
    }
    names_.assign(names.begin(), names.end());
  }

  json Call(State& state, const std::string& tool, const json& args) const override {
    if (cursor_.current == nullptr) {
      // Unreachable: the comparing policy stops the loop before an unmatched decision gets here.
      return ErrorEnvelope(MakeError(ErrorCode::kEINTERNAL,
                                     absl::StrCat("replay: no recorded result for ", tool)),
                           json::object(), absl::UnixEpoch());
    }
    ++cursor_.served;
    ApplyRecordedState(cursor_.current->state, state);
    return cursor_.current->result;
  }

  std::vector<std::string> Names() const override { return names_; }

 private:
  Cursor& cursor_;
  std::vector<std::string> names_;
};

}  // namespace

absl::StatusOr<ReplayReport> Replay(const RunRecord& run, const PolicyFactory& make_policy) {
  if (!run.start) {
    return absl::InvalidArgumentError(
        absl::StrCat("run ", run.run_id, " has no run_start line: its policy and budgets are unknown"));
  }
  const json& header = *run.start;
  absl::StatusOr<std::unique_ptr<Policy>> inner = make_policy(run.policy());
  if (!inner.ok()) return inner.status();

  Cursor cursor;
  cursor.run = &run;
  RecordedResults tools(run, cursor);

  State state;
  state.task.goal = header.value("goal", "");
  state.control.max_steps = header["budgets"]["max_steps"].get<int>();
  state.control.max_tool_calls = header["budgets"]["max_tool_calls"].get<int>();
  LoopOptions options;
  options.run_id = run.run_id;
  options.no_progress_window = header.value("no_progress_window", 3);
  // The run starts from run_start's state snapshot (traces from before it was recorded start from
  // an empty world); after each step the world's files are that step's recorded snapshot's.
  const json initial = header.contains("state") ? header["state"] : json::object();
  ApplyRecordedState(initial, state);
  options.list_files = [&cursor, &initial]() -> absl::StatusOr<std::vector<std::string>> {
    const json& snapshot = cursor.current != nullptr ? cursor.current->state : initial;
    std::vector<std::string> files;
    if (snapshot.is_object() && snapshot.contains("files") && snapshot["files"].is_array()) {
      for (const json& f : snapshot["files"]) {
        if (f.is_string()) files.push_back(f.get<std::string>());
      }
    }
    return files;
  };

  ComparingPolicy policy(*std::move(inner), cursor);
  RunSummary summary = RunLoop(tools, policy, state, /*trace=*/nullptr, options);

  ReplayReport report;
  report.run_id = run.run_id;
  report.policy = run.policy();
  report.recorded_steps = static_cast<int>(run.steps.size());
  report.recording_complete = run.end.has_value();
  report.recorded_stop_reason = run.stop_reason();
  report.replayed_stop_reason = std::string(StopReasonName(summary.stop_reason));
  if (!cursor.divergence && !cursor.exhausted && !state.session.messages.empty()) {
    // Next() checked every step's fingerprint but the last.
    (void)CheckFingerprint(cursor, state.session.messages.back());
  }
  if (!cursor.divergence && run.end && !cursor.exhausted) {
    json recorded = {{"stop_reason", run.stop_reason()},
                     {"steps", (*run.end)["steps"]},
                     {"tool_calls", (*run.end)["tool_calls"]}};
    json replayed = {{"stop_reason", report.replayed_stop_reason},
                     {"steps", summary.steps},
                     {"tool_calls", summary.tool_calls}};
    if (recorded != replayed) {
      cursor.divergence = Divergence{summary.steps, "stop", recorded, replayed};
    }
  }
  if (!cursor.divergence && run.end && !cursor.exhausted &&
      static_cast<size_t>(cursor.matched) < run.steps.size()) {
    // The replay stopped where the run_end says, yet the recording has more steps: a run spliced
    // or duplicated into the file. Those steps were never compared, so this is no match.
    const StepRecord& extra = run.steps[cursor.matched];
    cursor.divergence = Divergence{cursor.matched + 1, "decision", DecisionJson(extra),
                                   {{"stop_reason", report.replayed_stop_reason}}};
  }
  report.matched_steps = cursor.matched;
  report.results_served = cursor.served;
  report.divergence = cursor.divergence;
  return report;
}

}  // namespace agent::observe
