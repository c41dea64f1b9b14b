// The demo run behind `bazel run //agent:run_demo`: sets up the calculator workspace
// (demo_project.h), runs the scripted policy through the built-in tools, and writes the trace.
//
// Thread-safety: one demo run per process at a time (it creates directories and files).
#ifndef AGENT_DEMO_H_
#define AGENT_DEMO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/loop.h"
#include "agent/scripted_policy.h"

namespace agent {

inline constexpr char kDefaultTracePath[] = "/tmp/code-agent.jsonl";  // The seed's jq commands' file.

struct DemoOptions {
  ScriptMode mode = ScriptMode::kGood;
  int max_steps = 8;
  int max_tool_calls = 8;
  std::string trace_path = kDefaultTracePath;
  bool append_trace = false;  // Default: the trace file holds this run only.
  // Empty: a fresh directory under $TMPDIR (or /tmp) holding workspace/ and, next to it, the
  // secret.txt that escape mode aims at. Given: created if missing; if it exists it may hold only
  // the demo's files, so the demo never overwrites someone's project.
  std::string workspace_dir;
  // A fresh directory (workspace_dir empty) is removed when the run ends, on every path, unless
  // this is set. A given workspace_dir is never removed.
  bool keep_workspace = false;
  absl::Duration test_timeout = absl::Seconds(60);
  // Kernel isolation layers for test.run (sandbox/isolation.h list syntax: "all", "landlock,seccomp");
  // each is applied where available and skipped, and named in the result, where not. Empty: the
  // portable runner only (session, process group, rlimits, timeout, capped output).
  std::string isolate;
};

struct DemoResult {
  RunSummary summary;
  std::string workspace;  // The workspace root used.
  std::string trace_path;
  // The fresh directory (workspace/ and secret.txt), when the run made one and kept it; empty when
  // it was removed or the workspace was given.
  std::string kept_dir;
};

// Writes calc.sh and test.sh into `dir` (see DemoOptions::workspace_dir for the rules); returns the
// workspace directory. With `dir` empty it makes a fresh directory and, when `fresh_dir` is not
// null, names it there (the caller removes it with RemoveTree).
absl::StatusOr<std::string> PrepareDemoWorkspace(const std::string& dir,
                                                 std::string* fresh_dir = nullptr);

// Removes `dir` and everything beneath it, without following symlinks (a link the run made to
// elsewhere is removed, not its target) and without crossing into another filesystem.
absl::Status RemoveTree(const std::string& dir);

// Runs the demo. An error means the run could not start (workspace or trace); a run that starts
// always ends with a summary, whatever its stop reason.
absl::StatusOr<DemoResult> RunDemo(const DemoOptions& options);

}  // namespace agent

#endif  // AGENT_DEMO_H_
