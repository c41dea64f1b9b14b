// The built-in tools. Each names its exit to the world (DESIGN.md): the fs.* tools, patch.apply and
// test.run's log go through sandbox::Workspace; test.run's process goes through sandbox::Run.
//
//   fs.read       {path}                       whole file up to 256 KiB, else EFBIG (read_range);
//                                              data {path, content, bytes, lines, utf8} and a ref
//                                              {path, sha256}
//   fs.read_range {path, offset?, length?} or {path, start_line, end_line?}
//                                              a byte or 1-based inclusive line range
//   fs.list       {prefix?}                    workspace files with sizes, leaving out .git, build
//                                              caches and .agent
//   patch.apply   {path, old, new}             unique replacement: old must occur exactly once
//                                              (overlapping occurrences count); 0 -> ENOMATCH,
//                                              >1 -> EAMBIGUOUS naming the count; atomic write; bumps
//                                              the world version
//   test.run      {}                           the configured test command from the workspace root,
//                                              with limits and a timeout; data {exit_code,
//                                              term_signal, timed_out, passed, stdout, stderr,
//                                              truncated, layers_in_force, layers_unavailable
//                                              (each "layer: reason"), ...}; the full log (up to the runner's cap)
//                                              in .agent/logs/test-<hash>.log, named by its content
//                                              so an identical run yields an identical ref
//   task.finish   {answer}                     precondition: the most recent test.run passed after the
//                                              last write (EPRECONDITION otherwise); marks the task done
//
// `.agent/` is the agent's own bookkeeping inside the workspace (test logs). It is left out of
// fs.list and the trace's state.files, and writing there does not bump the world version: the world
// is the project, not the agent's notes about it.
//
// Thread-safety: the handlers use the registry's ToolEnv and the caller's State; one run at a time.
#ifndef AGENT_BUILTIN_TOOLS_H_
#define AGENT_BUILTIN_TOOLS_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/registry.h"
#include "sandbox/runner.h"
#include "sandbox/workspace.h"

namespace agent {

inline constexpr uint64_t kReadCap = 256 << 10;  // fs.read's whole-file limit (seed 13.3.4).
inline constexpr char kAgentDir[] = ".agent";
inline constexpr char kTestLogDir[] = ".agent/logs";

// Every scope the built-in tools need: workspace:read, workspace:write, exec:test, task:finish.
std::set<std::string> BuiltinScopes();

// Workspace options for the agent: the sandbox's default list excludes plus `.agent`.
sandbox::WorkspaceOptions AgentWorkspaceOptions();

// How test.run starts its process: sandbox::Run by default; a caller that wants the kernel isolation
// layers passes a function that applies them (the runner's contract either way).
using ProcessRunner = std::function<absl::StatusOr<sandbox::RunResult>(const sandbox::RunRequest&)>;

struct BuiltinToolOptions {
  ProcessRunner run;  // Unset: sandbox::Run.
};

// Registers the six tools above.
absl::Status RegisterBuiltinTools(Registry& registry, const BuiltinToolOptions& options = {});

}  // namespace agent

#endif  // AGENT_BUILTIN_TOOLS_H_
