// Runs a command through the sandbox runner with a rescue: if Run does not return within a bound
// (the incident a case reproduces may be exactly that hang), the case kills the processes it tagged,
// so Run can return and the suite fails instead of hanging until Bazel's timeout.
//
// Test-only. Thread-compatible.
#ifndef REDTEAM_RUN_TESTING_H_
#define REDTEAM_RUN_TESTING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sandbox/runner.h"

namespace redteam {

struct RescuedRun {
  absl::StatusOr<sandbox::RunResult> result;
  bool hung = false;  // Run had not returned after the bound; the rescue killed the tagged processes.
};

// Runs `request`. After `bound` without a return, SIGKILLs the pids written in `pid_files` and every
// process whose command line contains `marker` (when not empty), then waits for Run.
RescuedRun RunWithRescue(const sandbox::RunRequest& request, absl::Duration bound,
                         const std::vector<std::string>& pid_files, const std::string& marker);

// A request for `/bin/sh -c script marker` in `cwd` with a short timeout: `marker` becomes $0, so
// every subshell of the script carries it in its command line.
sandbox::RunRequest ShellRequest(const std::string& cwd, const std::string& script,
                                 const std::string& marker = "redteam-sh");

}  // namespace redteam

#endif  // REDTEAM_RUN_TESTING_H_
