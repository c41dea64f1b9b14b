#include "sandbox/linux/reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "sandbox/child_plan.h"
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

// SIGKILLs every current child but `except` through a pidfd. Returns how many it found, or -1 on
// error; the first `capacity` of them are stored in `found_pids` (may be null).
int KillChildren(pid_t except = -1, pid_t* found_pids = nullptr, int capacity = 0) {
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
      } else if (in_number && i < n && static_cast<pid_t>(pid) == except) {
        pid = 0;
        in_number = false;
      } else if (in_number && i < n) {
        if (found < capacity) found_pids[found] = static_cast<pid_t>(pid);
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

// The wait status waitpid would have returned for the child `info` describes.
int WaitStatusOf(const siginfo_t& info) {
  switch (info.si_code) {
    case CLD_EXITED: return (info.si_status & 0xff) << 8;
    case CLD_DUMPED: return (info.si_status & 0x7f) | 0x80;
    default: return info.si_status & 0x7f;  // CLD_KILLED
  }
}

}  // namespace

int SweepKeepingCommand(pid_t command) {
  // Until the command exits: reap adopted children as they exit, never the command.
  int command_status;
  while (true) {
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (info.si_pid == command) {
      command_status = WaitStatusOf(info);
      break;
    }
    while (waitpid(info.si_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  // Everything else still here was adopted: kill it, reap it, and repeat for its own orphans, which
  // are ours once their parents are reaped.
  while (true) {
    pid_t killed[256];
    const int found = KillChildren(command, killed, 256);
    if (found <= 0) break;
    for (int i = 0; i < std::min(found, 256); ++i) {
      while (waitpid(killed[i], nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  return command_status;
}

namespace {

[[noreturn]] void WaitKillAndMirror(pid_t command) {
  // Hold nothing: the runner's pipes must reach EOF when the command and its children close them.
  syscall(__NR_close_range, 0u, ~0u, 0u);
  struct sigaction ign;
  std::memset(&ign, 0, sizeof(ign));
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaction(sig, &ign, nullptr);
  const int status = SweepKeepingCommand(command);
  if (status < 0) _exit(127);
  MirrorStatus(status);  // The command, still a zombie, goes to init with us.
}

int ForkUnderSubreaper(const void* arg) {
  // Without the runner's error pipe nobody could learn the command's group: it stays in ours.
  const int error_fd = arg != nullptr ? *static_cast<const int*>(arg) : -1;
  const bool own_group = error_fd >= 0;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
  pid_t command = fork();
  if (command < 0) return errno;
  if (command > 0) {
    // The command's own group, which the runner signals on a timeout: the waiter is not in it, so
    // it outlives the group's SIGKILL and sweeps what it adopted. Both sides call setpgid (the
    // command may exec first); the report precedes the command's exec, which ends the pipe.
    if (own_group) {
      setpgid(command, command);
      ReportProcessGroup(error_fd, command);
    }
    WaitKillAndMirror(command);
  }
  // The command: the subreaper attribute is not inherited across fork.
  return !own_group || setpgid(0, 0) == 0 ? 0 : errno;
}

// End of child code.
// ---------------------------------------------------------------------------------------------

}  // namespace

void ReportProcessGroup(int error_fd, pid_t pgid) {
  const int32_t report[2] = {kChildReportProcessGroup, static_cast<int32_t>(pgid)};
  if (error_fd >= 0) WriteAll(error_fd, report, sizeof(report));
}

LayerStep SubreaperStep(const int* error_fd) { return {"fork(subreaper waiter)", ForkUnderSubreaper, error_fd}; }

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
