// mutation: skip-file(test support: the proof tests' fork-and-wait harness, testonly)
#include "sandbox/linux/forked_child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/linux/system_headers.h"
#include "sandbox/unique_fd.h"

namespace sandbox::linux_layers {

std::string ChildOutcome::ToString() const {
  if (exit_code) return absl::StrCat("exit ", *exit_code);
  if (term_signal) return absl::StrCat("signal ", *term_signal, " (", strsignal(*term_signal), ")");
  return "unknown";
}

absl::StatusOr<ChildOutcome> RunInForkedChild(const std::function<int()>& body,
                                              absl::Duration timeout) {
  pid_t pid = fork();
  if (pid < 0) return ErrnoError(errno, "fork()");
  if (pid == 0) {
    int code = 255;
    try {
      code = body();
    } catch (...) {
      abort();
    }
    _exit(code);
  }
  UniqueFd pidfd(static_cast<int>(syscall(__NR_pidfd_open, pid, 0)));
  if (pidfd.valid()) {
    pollfd p{pidfd.get(), POLLIN, 0};
    int ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(timeout), 1 << 30));
    int rc;
    do rc = poll(&p, 1, ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      syscall(__NR_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
      waitpid(pid, nullptr, 0);
      return absl::DeadlineExceededError(absl::StrCat("forked child still running after ", absl::FormatDuration(timeout)));
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError(errno, "waitpid(child)");
  }
  ChildOutcome out;
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.term_signal = WTERMSIG(status);
  return out;
}

int ExpectErrno(long rc, int expected) {
  if (rc != -1) return 100;
  int err = errno;
  if (err == expected) return 0;
  return std::min(101 + err, 254);
}

std::string DescribeExpectErrno(int code) {
  if (code == 0) return "ok";
  if (code == 100) return "call succeeded";
  return absl::StrCat("errno ", code - 101, " (", strerror(code - 101), ")");
}

}  // namespace sandbox::linux_layers
