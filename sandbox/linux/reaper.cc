#include "sandbox/linux/reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/linux/system_headers.h"

namespace sandbox::linux_layers {
namespace {

// ---------------------------------------------------------------------------------------------
// Child code: async-signal-safe (syscalls on stack buffers; no allocation).

// Formats "/proc/self/task/<tid>/children" into `buf`.
void ChildrenPath(char* buf, size_t size) {
  const char prefix[] = "/proc/self/task/";
  size_t n = sizeof(prefix) - 1;
  std::memcpy(buf, prefix, n);
  n += FormatUint(static_cast<uint64_t>(gettid()), buf + n, size - n);
  const char suffix[] = "/children";
  std::memcpy(buf + n, suffix, sizeof(suffix));
}

// SIGKILLs every current child through a pidfd. Returns how many it found, or -1 on error.
int KillChildren() {
  char path[64];
  ChildrenPath(path, sizeof(path));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  int found = 0;
  uint64_t pid = 0;
  bool in_number = false;
  // Read in chunks; a number split across two reads carries over in `pid`.
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i <= n; ++i) {
      bool digit = i < n && buf[i] >= '0' && buf[i] <= '9';
      if (digit) {
        pid = pid * 10 + static_cast<uint64_t>(buf[i] - '0');
        in_number = true;
      } else if (in_number && i < n) {
        int pidfd = static_cast<int>(syscall(__NR_pidfd_open, static_cast<pid_t>(pid), 0));
        if (pidfd >= 0) {
          syscall(__NR_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
          close(pidfd);
        } else if (errno == ENOSYS) {
          kill(static_cast<pid_t>(pid), SIGKILL);  // Our unreaped child: its pid cannot be reused.
        }
        ++found;
        pid = 0;
        in_number = false;
      }
    }
  }
  close(fd);
  return found;
}

}  // namespace

int KillAdoptedChildren() { return KillChildren(); }

namespace {

[[noreturn]] void WaitKillAndMirror(pid_t command) {
  // Hold nothing: the runner's pipes must reach EOF when the command and its children close them.
  syscall(__NR_close_range, 0u, ~0u, 0u);
  struct sigaction ign;
  std::memset(&ign, 0, sizeof(ign));
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaction(sig, &ign, nullptr);
  int command_status = 0;
  while (true) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == command) {
      command_status = status;
      break;
    }
    if (pid < 0 && errno != EINTR) _exit(127);
  }
  // Everything still here was adopted: kill it, reap it, and repeat for its own orphans, which we
  // adopt in turn as their parents die.
  while (true) {
    KillChildren();
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == ECHILD) break;
  }
  MirrorStatus(command_status);
}

int ForkUnderSubreaper(const void*) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
  pid_t command = fork();
  if (command < 0) return errno;
  if (command > 0) WaitKillAndMirror(command);
  // The command: the subreaper attribute is not inherited across fork.
  return 0;
}

// End of child code.
// ---------------------------------------------------------------------------------------------

}  // namespace

LayerStep SubreaperStep() { return {"fork(subreaper waiter)", ForkUnderSubreaper, nullptr}; }

absl::Status ProbeReaper() {
  int was = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0) != 0) {
    return MakeError(ErrorCode::kEUNSUPPORTED, "reaper: PR_GET_CHILD_SUBREAPER unsupported (Linux < 3.4)");
  }
  int fd = static_cast<int>(syscall(__NR_pidfd_open, getpid(), 0));
  if (fd < 0) {
    return MakeError(ErrorCode::kEUNSUPPORTED, absl::StrCat("reaper: pidfd_open: ", strerror(errno), " (Linux < 5.3)"));
  }
  close(fd);
  std::string children = absl::StrCat("/proc/self/task/", gettid(), "/children");
  if (access(children.c_str(), R_OK) != 0) {
    return MakeError(ErrorCode::kEUNSUPPORTED,
                     absl::StrCat("reaper: ", children, " missing (kernel without CONFIG_PROC_CHILDREN)"));
  }
  return absl::OkStatus();
}

}  // namespace sandbox::linux_layers
