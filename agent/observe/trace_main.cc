// bazel run //agent/observe:trace -- <stats|replay|diff|otel|html> [flags] FILE...
//
// Reads the agent's JSONL traces (agent/trace.h). Exit status: 0 success (replay: every decision
// matched; diff: the runs are the same), 1 replay diverged or diff found a difference, 2 a usage
// error or input that is not a readable trace (the message names the file and line).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/cli_flags.h"
#include "agent/observe/diff.h"
#include "agent/observe/html.h"
#include "agent/observe/otel.h"
#include "agent/observe/replay.h"
#include "agent/observe/stats.h"
#include "agent/observe/trace_reader.h"

namespace {

using agent::FlagParser;
using agent::observe::TraceSet;

constexpr int kOk = 0;
constexpr int kDifferent = 1;
constexpr int kUsage = 2;

constexpr char kTopUsage[] =
    "usage: trace <command> [flags] FILE...\n"
    "\n"
    "Reads the agent's JSONL traces (one JSON object per line: run_start, step, run_end).\n"
    "\n"
    "commands:\n"
    "  stats   runs, steps, tool counts, error rate, errors by code and tool, budget curve,\n"
    "          p50/p95/max duration per tool, cost (text, or --json)\n"
    "  replay  feeds the recorded results back through the agent's loop with the recorded policy\n"
    "          (no tool runs, no file is written) and checks every decision; exit 1 on divergence\n"
    "  diff    compares two runs step by step; exit 1 when they differ\n"
    "  otel    exports OTLP/JSON spans (OpenTelemetry GenAI conventions)\n"
    "  html    writes a self-contained HTML page for one run\n"
    "\n"
    "`trace <command> --help` describes each. Exit status: 0 success, 1 divergence or difference,\n"
    "2 usage error or a file that is not a valid trace.\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "trace: %s\n", message.c_str());
  return kUsage;
}

// Parses the command's flags; returns the positional arguments, or sets `exit_code`.
bool ParseFlags(FlagParser& flags, int argc, char** argv, std::vector<std::string>& positional,
                int& exit_code) {
  absl::StatusOr<std::vector<std::string>> parsed = flags.Parse(argc, argv);
  if (!parsed.ok()) {
    exit_code = Fail(absl::StrCat(argv[0], ": ", parsed.status().message()));
    return false;
  }
  if (flags.help()) {
    std::fputs(flags.Usage().c_str(), stdout);
    exit_code = kOk;
    return false;
  }
  positional = *std::move(parsed);
  for (std::string& p : positional) p = agent::ResolveUserPath(p);
  return true;
}

bool Read(const std::vector<std::string>& paths, TraceSet& set, int& exit_code) {
  absl::StatusOr<TraceSet> read = agent::observe::ReadTraceFiles(paths);
  if (!read.ok()) {
    exit_code = Fail(std::string(read.status().message()));
    return false;
  }
  set = *std::move(read);
  return true;
}

void PrintWarnings(const TraceSet& set) {
  for (const std::string& w : set.warnings) std::fprintf(stderr, "trace: warning: %s\n", w.c_str());
}

// Writes `text` to --out, or stdout when it is empty.
int Emit(const std::string& out_flag, const std::string& text) {
  if (out_flag.empty()) {
    std::fputs(text.c_str(), stdout);
    return kOk;
  }
  const std::string path = agent::ResolveUserPath(out_flag);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Fail(absl::StrCat("cannot write ", path));
  std::fprintf(stderr, "trace: wrote %s\n", path.c_str());
  return kOk;
}

int Stats(int argc, char** argv) {
  FlagParser flags("trace stats [--json] FILE...",
                   "Statistics over every run in the files (grouped by run_id): runs, steps, tool "
                   "counts,\nerror rate, errors by code and tool, the budget curve, p50/p95/max "
                   "duration per tool and\ncost (units: a result's cost.units, 1 for a call without "
                   "one; other numeric cost fields summed).\nA truncated last line is reported as "
                   "a warning.");
  flags.AddBool("json", "print JSON instead of text");
  std::vector<std::string> files;
  int code = kOk;
  if (!ParseFlags(flags, argc, argv, files, code)) return code;
  if (files.empty()) return Fail("stats: give at least one trace FILE (try --help)");
  TraceSet set;
  if (!Read(files, set, code)) return code;
  nlohmann::json stats = agent::observe::ComputeStats(set);
  if (flags.GetBool("json")) {
    std::printf("%s\n", stats.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(agent::observe::FormatStatsText(stats).c_str(), stdout);
  }
  return kOk;
}

int Replay(int argc, char** argv) {
  FlagParser flags("trace replay [--run=ID] [--json] FILE...",
                   "Replays each run (or the one given by --run): the agent's loop runs again with "
                   "the policy\nnamed in run_start and the recorded results in place of the tools "
                   "(nothing is executed,\nno file is written), and every decision is compared with "
                   "the recorded one. On the first\ndivergence prints the step, the recorded and the "
                   "new decision. Exit 0 when every run matches,\n1 on a divergence.");
  flags.AddString("run", "", "replay only the run with this run_id");
  flags.AddBool("json", "print one JSON report per run (a JSON array)");
  std::vector<std::string> files;
  int code = kOk;
  if (!ParseFlags(flags, argc, argv, files, code)) return code;
  if (files.empty()) return Fail("replay: give a trace FILE (try --help)");
  TraceSet set;
  if (!Read(files, set, code)) return code;
  PrintWarnings(set);
  std::vector<const agent::observe::RunRecord*> runs;
  if (flags.IsSet("run")) {
    absl::StatusOr<const agent::observe::RunRecord*> run =
        agent::observe::SelectRun(set, flags.GetString("run"));
    if (!run.ok()) return Fail(absl::StrCat("replay: ", run.status().message()));
    runs.push_back(*run);
  } else {
    for (const auto& run : set.runs) runs.push_back(&run);
  }
  if (runs.empty()) return Fail("replay: the trace holds no run");
  nlohmann::json reports = nlohmann::json::array();
  bool all_match = true;
  for (const agent::observe::RunRecord* run : runs) {
    absl::StatusOr<agent::observe::ReplayReport> report = agent::observe::Replay(*run);
    if (!report.ok()) return Fail(absl::StrCat("replay: ", report.status().message()));
    all_match = all_match && report->match();
    if (flags.GetBool("json")) {
      reports.push_back(report->ToJson());
    } else {
      std::fputs(report->ToText().c_str(), stdout);
    }
  }
  if (flags.GetBool("json")) {
    std::printf("%s\n", reports.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return all_match ? kOk : kDifferent;
}

int Diff(int argc, char** argv) {
  FlagParser flags("trace diff [--run-a=ID] [--run-b=ID] [--json] A B",
                   "Compares a run of trace A with a run of trace B step by step (decision, "
                   "observation,\nbudget, state; timings are ignored) and prints the first divergent "
                   "step and a summary of\nthe rest. A file with several runs needs --run-a / "
                   "--run-b. Exit 0 when the runs are the\nsame, 1 when they differ.");
  flags.AddString("run-a", "", "run_id to take from A");
  flags.AddString("run-b", "", "run_id to take from B");
  flags.AddBool("json", "print JSON");
  std::vector<std::string> files;
  int code = kOk;
  if (!ParseFlags(flags, argc, argv, files, code)) return code;
  if (files.size() != 2) return Fail("diff: give exactly two trace files A B (try --help)");
  TraceSet a, b;
  if (!Read({files[0]}, a, code) || !Read({files[1]}, b, code)) return code;
  PrintWarnings(a);
  PrintWarnings(b);
  absl::StatusOr<const agent::observe::RunRecord*> run_a =
      agent::observe::SelectRun(a, flags.GetString("run-a"));
  if (!run_a.ok()) return Fail(absl::StrCat("diff: ", files[0], ": ", run_a.status().message()));
  absl::StatusOr<const agent::observe::RunRecord*> run_b =
      agent::observe::SelectRun(b, flags.GetString("run-b"));
  if (!run_b.ok()) return Fail(absl::StrCat("diff: ", files[1], ": ", run_b.status().message()));
  agent::observe::DiffReport report = agent::observe::DiffRuns(**run_a, **run_b);
  if (flags.GetBool("json")) {
    std::printf("%s\n",
                report.ToJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(report.ToText().c_str(), stdout);
  }
  return report.identical() ? kOk : kDifferent;
}

int Otel(int argc, char** argv) {
  FlagParser flags("trace otel [--out=PATH] FILE...",
                   "Exports every run as OTLP/JSON (resourceSpans -> scopeSpans -> spans): an "
                   "invoke_agent span\nper run and an `execute_tool <tool>` span per step, per the "
                   "OpenTelemetry GenAI semantic\nconventions; ids are derived from run_id and step, "
                   "so the output is reproducible.");
  flags.AddString("out", "", "write here instead of stdout");
  std::vector<std::string> files;
  int code = kOk;
  if (!ParseFlags(flags, argc, argv, files, code)) return code;
  if (files.empty()) return Fail("otel: give at least one trace FILE (try --help)");
  TraceSet set;
  if (!Read(files, set, code)) return code;
  PrintWarnings(set);
  return Emit(flags.GetString("out"),
              agent::observe::ToOtlpJson(set).dump(2, ' ', false,
                                                   nlohmann::json::error_handler_t::replace) +
                  "\n");
}

int Html(int argc, char** argv) {
  FlagParser flags("trace html [--run=ID] [--out=PATH] FILE",
                   "Writes a self-contained HTML page (no network loads) for one run: a timeline of "
                   "steps with\ntool, status, duration, budget left and error code; click a step for "
                   "its envelope.");
  flags.AddString("run", "", "run_id (needed when the file holds several runs)");
  flags.AddString("out", "", "write here instead of stdout");
  std::vector<std::string> files;
  int code = kOk;
  if (!ParseFlags(flags, argc, argv, files, code)) return code;
  if (files.empty()) return Fail("html: give a trace FILE (try --help)");
  TraceSet set;
  if (!Read(files, set, code)) return code;
  PrintWarnings(set);
  absl::StatusOr<const agent::observe::RunRecord*> run =
      agent::observe::SelectRun(set, flags.GetString("run"));
  if (!run.ok()) return Fail(absl::StrCat("html: ", run.status().message()));
  return Emit(flags.GetString("out"), agent::observe::RenderRunHtml(**run));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kTopUsage, stderr);
    return kUsage;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kTopUsage, stdout);
    return kOk;
  }
  // Each command parses argv[1..] as its own argv: argv[1] (the command) plays argv[0].
  if (command == "stats") return Stats(argc - 1, argv + 1);
  if (command == "replay") return Replay(argc - 1, argv + 1);
  if (command == "diff") return Diff(argc - 1, argv + 1);
  if (command == "otel") return Otel(argc - 1, argv + 1);
  if (command == "html") return Html(argc - 1, argv + 1);
  return Fail(absl::StrCat("unknown command '", command,
                           "' (stats, replay, diff, otel, html; try --help)"));
}
