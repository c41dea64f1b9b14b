// The result of one setup step run in a forked child, and async-signal-safe helpers for such steps.
//
// Between fork and exec a child of a multithreaded parent may only make async-signal-safe calls: no
// allocation, no locks, no stdio. Every layer of sandbox/linux prepares its data in the parent and
// exposes its child work as a list of LayerSteps: plain functions over that data that only make
// system calls, each named by the call it makes so a failure reaches the caller as
// "<call> failed: <strerror>".
//
// Thread- and signal-safety: everything declared here is async-signal-safe.
#ifndef SANDBOX_LINUX_CHILD_STEP_H_
#define SANDBOX_LINUX_CHILD_STEP_H_

#include <cstddef>
#include <cstdint>

namespace sandbox::linux_layers {

// One step of a layer: `fn(arg)` runs in the child and returns 0 or the errno of the call that failed;
// `name` is that call as written ("unshare(CLONE_NEWUSER|...)"), a string literal. The shape matches
// the runner's ChildPlan steps, so a layer's steps are added to a run one by one.
using StepFn = int (*)(const void* arg);
struct LayerStep {
  const char* name;
  StepFn fn;
  const void* arg;  // Owned by the prepared layer; valid while it lives.
};

// The first failed step of a run of steps; err == 0 when all succeeded.
struct StepFailure {
  const char* name = nullptr;
  int err = 0;
  bool ok() const { return err == 0; }
};

// Runs `steps` in order and stops at the first failure. Async-signal-safe.
template <typename Steps>
StepFailure RunSteps(const Steps& steps) {
  for (const LayerStep& step : steps) {
    if (int err = step.fn(step.arg); err != 0) return {step.name, err};
  }
  return {};
}

// Writes all of `len` bytes to `fd`, retrying on EINTR and short writes. Returns 0 or an errno.
int WriteAll(int fd, const void* data, size_t len);

// Opens `path` (O_WRONLY|O_CLOEXEC), writes the NUL-terminated `text`, closes. Returns 0 or an errno.
int WriteFileAt(int dirfd, const char* path, const char* text);

// Formats `value` in decimal into `buf` (NUL-terminated); returns the length written.
size_t FormatUint(uint64_t value, char* buf, size_t size);

// Length of a NUL-terminated string (strlen is not on POSIX's async-signal-safe list).
size_t CStrLen(const char* s);

// Sets `sig` to SIG_DFL with an empty handler mask, through the raw rt_sigaction system call: glibc's
// sigaction refuses the real-time signals it reserves (32 and 33), so a process started with those
// ignored (SIG_IGN survives exec; some launchers pass them on) could not clear them for the program
// it execs. Returns 0 or an errno (EINVAL for SIGKILL, SIGSTOP and numbers out of range).
int SetDefaultDisposition(int sig);

// Every signal from 1 to the kernel's last (64) at SIG_DFL, SIGKILL and SIGSTOP excepted, and an
// empty signal mask: the state a program gets from a fresh shell. Returns 0 or the first errno.
int ResetAllSignals();

// Ends this process the way `status` (a wait status) says: the same exit code, or death by the same
// signal (its default action restored and unblocked first). Used by the waiters that stand in for a
// command (pid-namespace init, subreaper waiter) so the runner sees the command's own result.
[[noreturn]] void MirrorStatus(int status);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_CHILD_STEP_H_
