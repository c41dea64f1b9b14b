// Test support: records real traces without touching the world. The agent's real loop, real
// ScriptedPolicy and real TraceWriter run against in-memory stand-ins of the demo's four tools
// (fs.read, patch.apply, test.run, task.finish) that keep calc.sh in a string and "run" the tests by
// checking it for the fixed line. The traces have the exact shape of run_demo's, so the observe
// commands are tested on what the agent writes, not on a hand-made imitation.
//
// Thread-safety: one recording per thread.
#ifndef AGENT_OBSERVE_FAKE_DEMO_H_
#define AGENT_OBSERVE_FAKE_DEMO_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/loop.h"
#include "agent/scripted_policy.h"

namespace agent::observe {

struct FakeDemoOptions {
  ScriptMode mode = ScriptMode::kGood;
  int max_steps = 8;
  int max_tool_calls = 8;
  std::string run_id = "0123456789abcdef0123456789abcdef";
  bool tests_fail = false;     // test.run reports a failure even after the patch.
  std::string test_stdout;     // Extra text test.run prints (e.g. markup, for the HTML test).
};

// Runs the loop and appends its trace to `trace_path` (created if missing).
absl::StatusOr<RunSummary> RecordFakeDemo(const FakeDemoOptions& options,
                                          const std::string& trace_path);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_FAKE_DEMO_H_
