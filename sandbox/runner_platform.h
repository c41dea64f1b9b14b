// The few operations where Linux has a better tool than POSIX. runner_linux.cc implements them with
// vfork, pipe2, close_range and pidfd_open; runner_posix.cc with the portable calls (what macOS and
// `--config=portable` build). BUILD picks one with select(). Private to //sandbox:runner.
#ifndef SANDBOX_RUNNER_PLATFORM_H_
#define SANDBOX_RUNNER_PLATFORM_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "sandbox/child_plan.h"
#include "sandbox/unique_fd.h"

namespace sandbox::platform {

// Runs `steps` in the child and never returns: reports the first failing step on `error_fd` and
// _exits, or the last step (exec) replaces the process. Defined in runner.cc. Async-signal-safe.
[[noreturn]] void RunChildSteps(const std::vector<ChildStep>& steps, int error_fd);

// Starts the child running RunChildSteps; returns its pid in the parent (-1 with errno on failure).
// Linux uses vfork (the parent sleeps until exec, no page tables are copied: the runner's spawn cost
// is then within a few percent of posix_spawn) unless `must_fork` (a layer needs the parent to act
// while the child is in its setup, e.g. to write uid_map). POSIX always forks: vfork is not POSIX.
// The caller blocks all signals around this call.
pid_t StartChild(const std::vector<ChildStep>& steps, int error_fd, bool must_fork);

// Creates a pipe with both ends close-on-exec and numbered >= 3 (so dup2 onto 0, 1, 2 in the child
// never clobbers another pipe end). Thread-safe.
absl::Status MakePipe(UniqueFd& read_end, UniqueFd& write_end);

// Closes every fd in [first, last]. `loop_bound` is one past the highest fd a close() loop must try
// when the platform has no range call (computed before fork). Async-signal-safe: called in the child.
// Returns 0 or an errno value.
int CloseFdRange(int first, int last, int loop_bound);

// An fd that polls readable once `pid` (a child of ours) has exited, or an invalid fd when the
// platform has none; the runner then checks with waitid(WNOHANG) on a short tick.
UniqueFd OpenExitNotifier(pid_t pid);

// Sets `sig` to SIG_DFL. Linux goes past libc's sigaction, which refuses the real-time signals glibc
// reserves for itself (32, 33): a runner started with those ignored would otherwise pass that on.
// Async-signal-safe. Returns 0 or an errno.
int SetDefaultDisposition(int sig);

// ru_maxrss in KiB (Linux reports KiB, macOS bytes).
int64_t MaxRssKb(const struct rusage& usage);

// "close_range" or "close_loop": how the close-fds step works here, for the result's layers.
const char* CloseFdsMechanism();

}  // namespace sandbox::platform

#endif  // SANDBOX_RUNNER_PLATFORM_H_
