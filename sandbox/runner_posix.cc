// POSIX implementation of runner_platform.h: what macOS and `--config=portable` use.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/errors.h"
#include "sandbox/runner_platform.h"

namespace sandbox::platform {
namespace {

// Marks `fd` close-on-exec and moves it to >= 3. There is a window between pipe() and fcntl() in
// which another thread's fork could inherit the fd; harmless here because every child of the runner
// closes all fds but 0, 1, 2 before exec.
absl::Status Prepare(int fd, UniqueFd& out) {
  UniqueFd owned(fd);
  if (fd < 3) {
    const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (moved == -1) return ErrnoError(errno, "fcntl(F_DUPFD_CLOEXEC)");
    owned.reset(moved);
  } else if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
    return ErrnoError(errno, "fcntl(F_SETFD, FD_CLOEXEC)");
  }
  out = std::move(owned);
  return absl::OkStatus();
}

}  // namespace

pid_t StartChild(const std::vector<ChildStep>& steps, int error_fd, bool) {
  const pid_t pid = fork();
  if (pid == 0) RunChildSteps(steps, error_fd);  // Never returns.
  return pid;
}

absl::Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (pipe(fds) == -1) return ErrnoError(errno, "pipe()");
  UniqueFd r(fds[0]), w(fds[1]);
  absl::Status status = Prepare(r.release(), read_end);
  if (!status.ok()) return status;
  return Prepare(w.release(), write_end);
}

// Async-signal-safe: close() only.
int CloseFdRange(int first, int last, int loop_bound) {
  const int end = last < loop_bound ? last + 1 : loop_bound;
  for (int fd = first; fd < end; ++fd) close(fd);  // EBADF for fds not open: expected.
  return 0;
}

UniqueFd OpenExitNotifier(pid_t) { return UniqueFd(); }

int SetDefaultDisposition(int sig) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  return sigaction(sig, &action, nullptr) == 0 ? 0 : errno;
}

int64_t MaxRssKb(const struct rusage& usage) {
#if defined(__APPLE__)
  return static_cast<int64_t>(usage.ru_maxrss) / 1024;  // macOS reports bytes.
#else
  return static_cast<int64_t>(usage.ru_maxrss);  // Linux and the BSDs report KiB.
#endif
}

const char* CloseFdsMechanism() { return "close_loop"; }

}  // namespace sandbox::platform
