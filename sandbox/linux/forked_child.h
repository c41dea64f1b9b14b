// Runs a snippet in a forked child and reports how it ended: the harness for proof tests that apply
// a layer, try the forbidden thing, and report through the exit code. Reused by the red-team
// `hardening` group.
//
// Thread-safety: call from a single-threaded process (a test), since the child runs `body`, which may
// allocate. Not for production code: the runner has its own async-signal-safe child path.
#ifndef SANDBOX_LINUX_FORKED_CHILD_H_
#define SANDBOX_LINUX_FORKED_CHILD_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sandbox::linux_layers {

struct ChildOutcome {
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  bool Exited(int code) const { return exit_code.has_value() && *exit_code == code; }
  std::string ToString() const;  // "exit 3", "signal 9 (Killed)".
};

// Forks; the child runs `body` and exits with its return value (an exception or a crash shows as a
// signal). The parent waits up to `timeout`, then SIGKILLs the child through a pidfd and returns
// DeadlineExceeded.
absl::StatusOr<ChildOutcome> RunInForkedChild(const std::function<int()>& body,
                                              absl::Duration timeout = absl::Seconds(30));

// For bodies: 0 when `rc` is -1 with errno == `expected`, 100 when the call succeeded, 101 + the
// actual errno otherwise (capped at 254), so a test failure message says what happened.
int ExpectErrno(long rc, int expected);

// The exit code of ExpectErrno as text: "ok", "call succeeded", "errno 13 (Permission denied)".
std::string DescribeExpectErrno(int code);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_FORKED_CHILD_H_
