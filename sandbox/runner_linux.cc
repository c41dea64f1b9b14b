// Linux implementation of runner_platform.h: vfork spares copying the parent's page tables (the
// dominant cost of fork in a large agent process), pipe2(O_CLOEXEC) closes the fork race of pipe()+fcntl(),
// close_range closes every fd in one call however high the limit, and a pidfd tells poll() the moment
// the child exits instead of a waitid() tick.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/errors.h"
#include "sandbox/linux/child_step.h"
#include "sandbox/runner_platform.h"

#ifndef SYS_close_range
#define SYS_close_range 436  // Linux 5.9; older headers lack the number.
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // Linux 5.3.
#endif

namespace sandbox::platform {
namespace {

absl::Status MoveAbove2(UniqueFd& fd) {
  if (fd.get() >= 3) return absl::OkStatus();
  const int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved == -1) return ErrnoError(errno, "fcntl(F_DUPFD_CLOEXEC)");
  fd.reset(moved);
  return absl::OkStatus();
}

}  // namespace

// The child runs on our stack while we are suspended; RunChildSteps never returns, so no frame of
// ours is overwritten (the vfork rule), and the steps write no shared memory.
pid_t StartChild(const std::vector<ChildStep>& steps, int error_fd, bool must_fork) {
  const pid_t pid = must_fork ? fork() : vfork();
  if (pid == 0) RunChildSteps(steps, error_fd);  // Never returns.
  return pid;
}

absl::Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) == -1) return ErrnoError(errno, "pipe2(O_CLOEXEC)");
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  absl::Status status = MoveAbove2(read_end);
  if (!status.ok()) return status;
  return MoveAbove2(write_end);
}

// Async-signal-safe: raw syscalls and close() only.
int CloseFdRange(int first, int last, int loop_bound) {
  if (syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(last), 0u) == 0) {
    return 0;
  }
  if (errno != ENOSYS) return errno;
  const int end = last < loop_bound ? last + 1 : loop_bound;  // Kernel older than 5.9.
  for (int fd = first; fd < end; ++fd) close(fd);
  return 0;
}

UniqueFd OpenExitNotifier(pid_t pid) {
  const long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return UniqueFd();  // Kernel older than 5.3: the runner falls back to a tick.
  if (fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC) == -1) {
    close(static_cast<int>(fd));  // pidfd_open sets O_CLOEXEC itself; this only guards old kernels.
    return UniqueFd();
  }
  return UniqueFd(static_cast<int>(fd));
}

int SetDefaultDisposition(int sig) { return linux_layers::SetDefaultDisposition(sig); }

int64_t MaxRssKb(const struct rusage& usage) { return static_cast<int64_t>(usage.ru_maxrss); }

const char* CloseFdsMechanism() { return "close_range"; }

}  // namespace sandbox::platform
