// bazel run //agent:run_demo -- --mode=good|loop|escape [--max-steps=N] [--trace=PATH] [--workspace=DIR]
//
// Prints the JSON summary {answer, steps, stop_reason, tool_calls, trace_steps} on stdout, where the
// trace and workspace are on stderr. Exit status: 0 for stop_reason "done", 1 for any other stop or a
// run that could not start, 2 for bad flags.
#include <cstdio>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/cli_flags.h"
#include "agent/demo.h"
#include "sandbox/isolation.h"

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "run_demo: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  agent::FlagParser flags(
      "run_demo [--mode=good|loop|escape] [--max-steps=N] [--max-tool-calls=N] [--trace=PATH] "
      "[--append-trace] [--workspace=DIR] [--keep-workspace] [--test-timeout-s=N] [--isolate=LAYERS]",
      "Runs the scripted agent on the demo workspace (calc.sh, whose add() subtracts, and test.sh),\n"
      "writes a JSONL trace and prints the run summary as JSON. Modes: good reads, patches, tests and\n"
      "finishes (stop_reason done, 4 steps); loop reads the same file until the no-progress brake\n"
      "stops it; escape tries ../secret.txt, which the path policy refuses (EPERM) at step 1, and\n"
      "ends with no_progress after 3 identical refusals. Relative paths are taken from the directory\n"
      "`bazel run` was started in. Exit status 0 only when the task is done.");
  flags.AddString("mode", "good", "good, loop or escape");
  flags.AddInt("max-steps", 8, "step budget");
  flags.AddInt("max-tool-calls", 8, "tool-call budget");
  flags.AddString("trace", agent::kDefaultTracePath, "JSONL trace file (emptied first)");
  flags.AddBool("append-trace", "append to the trace file instead of emptying it");
  flags.AddString("workspace", "",
                  "workspace directory; default: a fresh one under $TMPDIR or /tmp. An existing "
                  "directory may hold only calc.sh, test.sh and .agent");
  flags.AddBool("keep-workspace",
                "keep the fresh demo directory (workspace/ and secret.txt) after the run; without "
                "it, a directory the demo made is removed (a given --workspace never is)");
  flags.AddInt("test-timeout-s", 60, "wall-clock timeout of one test.run, seconds");
  flags.AddString("isolate", "",
                  "kernel isolation layers for test.run: all, or a list such as landlock,seccomp "
                  "(applied where available, named in the result where not); empty: none");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv);
  if (!positional.ok()) return Usage(std::string(positional.status().message()));
  if (flags.help()) {
    std::fputs(flags.Usage().c_str(), stdout);
    return 0;
  }
  if (!positional->empty()) return Usage(absl::StrCat("unexpected argument '", (*positional)[0], "'"));

  agent::DemoOptions options;
  absl::StatusOr<agent::ScriptMode> mode = agent::ParseScriptMode(flags.GetString("mode"));
  if (!mode.ok()) return Usage(absl::StrCat("--mode: ", mode.status().message()));
  options.mode = *mode;
  for (const char* name : {"max-steps", "max-tool-calls"}) {
    int64_t n = flags.GetInt(name);
    if (n < 0 || n > 1000000) return Usage(absl::StrCat("--", name, " must be in 0..1000000"));
  }
  options.max_steps = static_cast<int>(flags.GetInt("max-steps"));
  options.max_tool_calls = static_cast<int>(flags.GetInt("max-tool-calls"));
  int64_t timeout = flags.GetInt("test-timeout-s");
  if (timeout <= 0 || timeout > 86400) return Usage("--test-timeout-s must be in 1..86400");
  options.test_timeout = absl::Seconds(timeout);
  if (flags.GetString("trace").empty()) return Usage("--trace needs a path");
  options.trace_path = agent::ResolveUserPath(flags.GetString("trace"));
  options.append_trace = flags.GetBool("append-trace");
  options.workspace_dir = agent::ResolveUserPath(flags.GetString("workspace"));
  options.keep_workspace = flags.GetBool("keep-workspace");
  options.isolate = flags.GetString("isolate");
  if (absl::StatusOr<std::set<sandbox::Layer>> layers = sandbox::ParseLayerList(options.isolate);
      !layers.ok()) {
    return Usage(absl::StrCat("--isolate: ", layers.status().message()));
  }

  absl::StatusOr<agent::DemoResult> result = agent::RunDemo(options);
  if (!result.ok()) {
    std::fprintf(stderr, "run_demo: could not start: %s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  const agent::RunSummary& s = result->summary;
  const bool removed = options.workspace_dir.empty() && !options.keep_workspace;
  std::fprintf(stderr, "run_demo: workspace %s%s\nrun_demo: trace %s (run_id %s)\nrun_demo: %s: %s\n",
               result->workspace.c_str(),
               removed ? " (a fresh one, now removed; --keep-workspace keeps it)" : "",
               result->trace_path.c_str(), s.run_id.c_str(),
               std::string(agent::StopReasonName(s.stop_reason)).c_str(), s.stop_detail.c_str());
  std::printf("%s\n", s.ToJson().dump(2).c_str());
  return s.stop_reason == agent::StopReason::kDone ? 0 : 1;
}
