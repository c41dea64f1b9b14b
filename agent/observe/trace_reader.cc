#include "agent/observe/trace_reader.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/trace.h"

namespace agent::observe {

using nlohmann::json;

bool StepRecord::ok() const { return result.value("ok", false); }

std::string StepRecord::error_code() const {
  if (ok()) return "";
  const json* error = result.contains("error") ? &result["error"] : nullptr;
  if (error == nullptr || !error->is_object()) return "";
  return error->value("code", "");
}

std::string RunRecord::policy() const {
  if (!start || !(*start)["policy"].is_string()) return "";
  return (*start)["policy"].get<std::string>();
}

std::string RunRecord::stop_reason() const {
  if (!end) return "";
  return end->value("stop_reason", "");
}

const RunRecord* TraceSet::Find(absl::string_view run_id) const {
  for (const RunRecord& run : runs) {
    if (run.run_id == run_id) return &run;
  }
  return nullptr;
}

namespace {

// The value at a dotted path ("budget_before.steps_left"), or nullptr.
const json* At(const json& line, absl::string_view dotted) {
  const json* cur = &line;
  for (absl::string_view part : absl::StrSplit(dotted, '.')) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(part));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

enum class Want { kString, kInteger, kNumber, kBool, kObject, kAny };

const char* WantName(Want want) {
  switch (want) {
    case Want::kString: return "a string";
    case Want::kInteger: return "an integer";
    case Want::kNumber: return "a number";
    case Want::kBool: return "a boolean";
    case Want::kObject: return "an object";
    case Want::kAny: return "present";
  }
  return "present";
}

bool Matches(const json& v, Want want) {
  switch (want) {
    case Want::kString: return v.is_string();
    case Want::kInteger: return v.is_number_integer();
    case Want::kNumber: return v.is_number();
    case Want::kBool: return v.is_boolean();
    case Want::kObject: return v.is_object();
    case Want::kAny: return true;
  }
  return false;
}

struct FieldRule {
  const char* path;
  Want want;
};

// What each line type must carry for the commands to work on it (agent/trace.h).
constexpr FieldRule kStartFields[] = {
    {"policy", Want::kString},
    {"budgets.max_steps", Want::kInteger},
    {"budgets.max_tool_calls", Want::kInteger},
};
constexpr FieldRule kStepFields[] = {
    {"step", Want::kInteger},
    {"decision.tool", Want::kString},
    {"decision.args", Want::kAny},
    {"result.ok", Want::kBool},
    {"duration_ms", Want::kNumber},
    {"budget_before.steps_left", Want::kInteger},
    {"budget_before.tools_left", Want::kInteger},
    {"state", Want::kObject},
};
constexpr FieldRule kEndFields[] = {
    {"stop_reason", Want::kString},
    {"steps", Want::kInteger},
    {"tool_calls", Want::kInteger},
};

template <size_t N>
absl::Status CheckFields(const json& line, const std::string& type, const FieldRule (&rules)[N]) {
  for (const FieldRule& rule : rules) {
    const json* v = At(line, rule.path);
    if (v == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(type, " line lacks the field '", rule.path, "'"));
    }
    if (!Matches(*v, rule.want)) {
      return absl::InvalidArgumentError(absl::StrCat(type, " line: '", rule.path, "' must be ",
                                                     WantName(rule.want), ", not ",
                                                     v->type_name()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEnvelope(const json& line) {
  const json& result = line["result"];
  if (result["ok"].get<bool>()) return absl::OkStatus();
  const json* code = At(result, "error.code");
  if (code == nullptr || !code->is_string()) {
    return absl::InvalidArgumentError(
        "step line: a failed result (ok false) lacks the string 'result.error.code'");
  }
  return absl::OkStatus();
}

StepRecord ToStep(const json& line, std::string source) {
  StepRecord s;
  s.source = std::move(source);
  s.step = line["step"].get<int>();
  s.tool = line["decision"]["tool"].get<std::string>();
  s.args = line["decision"]["args"];
  s.result = line["result"];
  s.duration_ms = line["duration_ms"].get<double>();
  s.steps_left = line["budget_before"]["steps_left"].get<int>();
  s.tools_left = line["budget_before"]["tools_left"].get<int>();
  s.state = line["state"];
  s.fingerprint = line.value("fingerprint", "");
  if (line.contains("started_at") && line["started_at"].is_string()) {
    s.started_at = line["started_at"].get<std::string>();
  }
  return s;
}

RunRecord& RunFor(TraceSet& set, const std::string& run_id) {
  for (RunRecord& run : set.runs) {
    if (run.run_id == run_id) return run;
  }
  set.runs.push_back(RunRecord{run_id, std::nullopt, {}, std::nullopt});
  return set.runs.back();
}

// Checks one parsed line and files it into its run.
absl::Status AddLine(const json& line, const std::string& where, TraceSet& set) {
  if (!line.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a trace line is a JSON object, this one is ", line.type_name()));
  }
  const json* version = At(line, "trace_version");
  if (version == nullptr) {
    return absl::InvalidArgumentError(
        "no 'trace_version' field: not an agent trace line (agent/trace.h)");
  }
  if (!version->is_number_integer() || version->get<int64_t>() != kTraceVersion) {
    return absl::InvalidArgumentError(absl::StrCat("trace_version ", version->dump(),
                                                   " is not supported; this reader knows ",
                                                   kTraceVersion));
  }
  const json* type = At(line, "type");
  if (type == nullptr || !type->is_string()) {
    return absl::InvalidArgumentError("no string 'type' field (run_start, step or run_end)");
  }
  const json* run_id = At(line, "run_id");
  if (run_id == nullptr || !run_id->is_string() || run_id->get<std::string>().empty()) {
    return absl::InvalidArgumentError("no non-empty string 'run_id' field");
  }
  const std::string t = type->get<std::string>();
  const std::string id = run_id->get<std::string>();
  if (t == "run_start") {
    if (absl::Status s = CheckFields(line, t, kStartFields); !s.ok()) return s;
    RunRecord& run = RunFor(set, id);
    if (run.start) {
      set.warnings.push_back(
          absl::StrCat(where, ": a second run_start for run ", id, " (the first one is kept)"));
    } else {
      run.start = line;
    }
  } else if (t == "step") {
    if (absl::Status s = CheckFields(line, t, kStepFields); !s.ok()) return s;
    if (absl::Status s = CheckEnvelope(line); !s.ok()) return s;
    RunRecord& run = RunFor(set, id);
    if (run.end) {
      set.warnings.push_back(absl::StrCat(where, ": step line after the run_end of run ", id));
    }
    StepRecord step = ToStep(line, where);
    const int expected = run.steps.empty() ? 1 : run.steps.back().step + 1;
    if (step.step != expected) {
      set.warnings.push_back(absl::StrCat(where, ": run ", id, " has step ", step.step,
                                          " where step ", expected,
                                          " was due (a duplicated, spliced or cut recording)"));
    }
    run.steps.push_back(std::move(step));
  } else if (t == "run_end") {
    if (absl::Status s = CheckFields(line, t, kEndFields); !s.ok()) return s;
    RunRecord& run = RunFor(set, id);
    if (run.end) {
      set.warnings.push_back(
          absl::StrCat(where, ": a second run_end for run ", id, " (the first one is kept)"));
    } else {
      run.end = line;
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown line type '", t, "' (run_start, step or run_end)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseTrace(absl::string_view name, absl::string_view content, TraceSet& set) {
  std::vector<absl::string_view> lines = absl::StrSplit(content, '\n');
  // A file ending in '\n' splits into a last empty piece, which is not a line.
  const bool ends_with_newline = !content.empty() && content.back() == '\n';
  if (ends_with_newline || content.empty()) lines.pop_back();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = absl::StrCat(name, ":", i + 1);
    absl::string_view text = lines[i];
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == absl::string_view::npos) continue;
    const bool unterminated = i + 1 == lines.size() && !ends_with_newline;
    json line;
    try {
      line = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      if (unterminated) {
        set.warnings.push_back(absl::StrCat(where, ": truncated last line (", text.size(),
                                            " bytes, no newline, not JSON) skipped"));
        break;
      }
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": not JSON (parse error at byte ", e.byte, " of the line)"));
    }
    absl::Status s;
    try {
      s = AddLine(line, where, set);
    } catch (const json::exception& e) {
      // A field of the wrong shape that the rules above did not foresee (e.g. an int overflow).
      s = absl::InvalidArgumentError(absl::StrCat("malformed line: ", e.what()));
    }
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
    ++set.lines;
  }
  return absl::OkStatus();
}

absl::Status ReadTraceFile(const std::string& path, TraceSet& set) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open trace ", path));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("reading trace ", path, " failed"));
  return ParseTrace(path, buf.str(), set);
}

absl::StatusOr<TraceSet> ReadTraceFiles(const std::vector<std::string>& paths) {
  TraceSet set;
  for (const std::string& path : paths) {
    if (absl::Status s = ReadTraceFile(path, set); !s.ok()) return s;
  }
  return set;
}

absl::StatusOr<const RunRecord*> SelectRun(const TraceSet& set, const std::string& run_id) {
  if (!run_id.empty()) {
    const RunRecord* run = set.Find(run_id);
    if (run == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no run with run_id ", run_id));
    }
    return run;
  }
  if (set.runs.empty()) return absl::InvalidArgumentError("the trace holds no run");
  if (set.runs.size() > 1) {
    std::vector<std::string> ids;
    for (const RunRecord& run : set.runs) ids.push_back(run.run_id);
    return absl::InvalidArgumentError(absl::StrCat("the trace holds ", set.runs.size(),
                                                   " runs; pick one with --run=ID: ",
                                                   absl::StrJoin(ids, ", ")));
  }
  return &set.runs[0];
}

}  // namespace agent::observe
