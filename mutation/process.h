// Runs one child process in its own process group with a deadline, and stops it (and everything it
// started in that group) when the deadline passes or the caller asks to stop. Thread-safe: each
// call owns its child.
#ifndef MUTATION_PROCESS_H_
#define MUTATION_PROCESS_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mutation {

struct ProcessSpec {
  std::vector<std::string> argv;   // argv[0] is looked up in PATH when it has no '/'
  std::string cwd;                 // empty: inherit
  std::string stdout_path;         // the child's stdout goes here (truncated first)
  std::string stderr_path;         // empty: same file as stdout
  // The child's whole environment when set ("NAME=value" each); argv[0] must then be a path.
  std::vector<std::string> env;
  bool replace_env = false;
  double timeout_seconds = 0;      // 0: no deadline
  // Between SIGINT (Bazel cancels its command cleanly on it) and SIGKILL of the whole group.
  double grace_seconds = 10;
};

struct ProcessResult {
  int exit_code = -1;       // when the child exited
  int term_signal = 0;      // when a signal ended it
  bool timed_out = false;   // we stopped it at the deadline
  bool interrupted = false; // we stopped it because *stop became non-zero
  double seconds = 0;       // wall time
};

// Runs spec to completion. `stop` (may be null) is polled; when it turns non-zero the child's group
// gets SIGINT, then SIGKILL after the grace period. Errors only for fork/pipe/open failures; a
// child that cannot exec exits 127.
absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec, const std::atomic<int>* stop);

// Whole-file helpers. WriteFileAtomic writes a sibling temporary and renames it over `path`, so a
// reader (or a crash) sees the old or the new content, never a torn file; it keeps `mode`.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFileAtomic(const std::string& path, const std::string& content, int mode = 0644);

}  // namespace mutation

#endif  // MUTATION_PROCESS_H_
