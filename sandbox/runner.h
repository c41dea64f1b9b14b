// The subprocess runner: the only way code here starts a process.
//
// A command runs from an argv (never a shell string) in its own session and process group, with
// rlimits from a table applied between fork and exec, every fd but 0, 1, 2 closed, and an explicit
// environment. A wall-clock timeout, separate from CPU time, sends SIGTERM to the whole group, waits a
// grace period, then SIGKILLs it; the runner always reaps, so no zombie or orphan of the group is left.
// stdout and stderr stream through byte caps: past a cap the runner keeps draining and counting, so the
// child never blocks, and the result says `truncated` with the total seen. A failure between fork and
// exec ("exec failed: No such file or directory", "setrlimit(RLIMIT_AS) failed") reaches the caller as
// an error with its errno, never as a bare exit status 127.
//
// When the direct child exits, whatever is left of its group is SIGKILLed and Run waits (bounded) for
// the group to empty: a background process cannot outlive the run or hold the pipes open. A process
// that leaves the group (setsid, double fork into a new session) escapes this portable runner; the
// Linux layers (cgroup, subreaper) catch those.
//
// Portability: POSIX only. Linux-specific speed-ups (vfork, pipe2, close_range, pidfd exit
// notification) live in runner_linux.cc, chosen by select(); the POSIX fallbacks in runner_posix.cc
// (fork, pipe+fcntl, a close() loop, a waitid tick) are what macOS and `--config=portable` build.
//
// Signals: Run never changes the process's signal dispositions. It blocks signals in the calling thread
// around fork and SIGPIPE around writes to the child's stdin, and restores the mask afterwards. A host
// that sets SIGCHLD to SIG_IGN (children auto-reaped) cannot use Run: it fails with EINTERNAL.
//
// Thread-safety: Run may be called from several threads at once. ParentEnvironment reads `environ`:
// not safe against a concurrent setenv.
#ifndef SANDBOX_RUNNER_H_
#define SANDBOX_RUNNER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sandbox/child_plan.h"

namespace sandbox {

// Per-process limits (setrlimit). A limit left unset is not applied.
struct Limits {
  std::optional<uint64_t> cpu_seconds = 10;                    // RLIMIT_CPU soft; hard = soft + 1.
  std::optional<uint64_t> file_size_bytes = 64ull << 20;       // RLIMIT_FSIZE.
  std::optional<uint64_t> open_files = 256;                    // RLIMIT_NOFILE.
  std::optional<uint64_t> address_space_bytes;                 // RLIMIT_AS (optional).
  std::optional<uint64_t> processes;                           // RLIMIT_NPROC (optional; not for root).
  // RLIMIT_CORE is always 0: a crashing child never writes a core into the workspace.
};

// The longest a set RunRequest::cancel flag goes unnoticed.
inline constexpr absl::Duration kCancelCheck = absl::Milliseconds(50);

struct RunRequest {
  std::vector<std::string> argv;  // argv[0] is resolved on PATH of `env` if it has no '/'.
  std::string cwd;                // Absolute; the caller resolves it inside the workspace.
  // The child's whole environment. Unset: a minimal default (PATH, HOME=cwd, LANG=C.UTF-8).
  std::optional<std::map<std::string, std::string>> env;
  std::optional<std::string> stdin_data;  // Unset: stdin is /dev/null.
  absl::Duration wall_timeout = absl::Seconds(30);
  absl::Duration kill_grace = absl::Seconds(2);  // SIGTERM -> SIGKILL; zero sends SIGKILL at once.
  // Optional: when it becomes true the run ends as on timeout (SIGTERM to the group, grace, SIGKILL)
  // and the result says `cancelled`. Set from another thread or a signal handler; Run notices within
  // kCancelCheck (a signal arriving in Run's thread is noticed at once: it interrupts poll).
  const std::atomic<bool>* cancel = nullptr;
  uint64_t stdout_cap = 1 << 20;
  uint64_t stderr_cap = 1 << 20;
  Limits limits;
};

struct StreamCapture {
  std::string data;       // At most the cap.
  bool truncated = false;
  uint64_t total_bytes = 0;  // Everything the child wrote, kept or not.
};

struct RunResult {
  std::optional<int> exit_code;    // Set when the child exited.
  std::optional<int> term_signal;  // Set when a signal ended it.
  bool timed_out = false;          // The wall timeout fired.
  bool cancelled = false;          // RunRequest::cancel ended the run.
  absl::Duration wall_time;
  absl::Duration user_cpu;
  absl::Duration system_cpu;
  int64_t peak_rss_kb = 0;
  pid_t pid = -1;
  pid_t pgid = -1;
  StreamCapture out;
  StreamCapture err;
  std::vector<std::string> limits_in_force;  // e.g. "RLIMIT_CPU=10:11".
  std::vector<std::string> layers_in_force;  // e.g. "session", "process_group", "rlimits".
  // Isolation layers asked for but not applied, each with why ("landlock: kernel without ...").
  // Filled by RunIsolated (isolation.h); plain Run leaves it empty.
  std::vector<std::string> layers_unavailable;
  bool memory_limit_killed = false;  // The cgroup memory limit's OOM kill ended the command.
};

// The minimal environment used when RunRequest::env is unset: PATH, HOME=cwd, LANG=C.UTF-8.
std::map<std::string, std::string> DefaultEnvironment(const std::string& cwd);

// The calling process's environment as a map, for callers that explicitly ask to pass it on.
std::map<std::string, std::string> ParentEnvironment();

// Adds a platform layer's steps to the child's setup (see child_plan.h). Called once per Run, before
// fork, after the runner's own steps are in the plan; an error refuses the run (fail closed).
using PlanExtension = std::function<absl::Status(const RunRequest&, ChildPlan&)>;

// Runs the command to completion (or timeout). When Run returns, the direct child is reaped and every
// process left in its process group has been SIGKILLed (background children do not outlive a run).
// Errors: EINVAL for a bad request (empty argv, relative cwd, NUL bytes, bad env names, non-positive
// timeout or CPU limit), ENOENT for a missing cwd or program, and the errno of a failed child step
// ("exec failed: ...", "setrlimit(RLIMIT_NOFILE) failed: ..."), EIO/ETRANSIENT for fork/pipe failures.
// A non-zero exit status, a signal or a timeout is not an error: it is in the RunResult.
absl::StatusOr<RunResult> Run(const RunRequest& request);

// Run with extra child setup steps from a platform layer; an empty `extend` is plain Run.
absl::StatusOr<RunResult> Run(const RunRequest& request, const PlanExtension& extend);

}  // namespace sandbox

#endif  // SANDBOX_RUNNER_H_
