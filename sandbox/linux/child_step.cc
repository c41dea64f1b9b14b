#include "sandbox/linux/child_step.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace sandbox::linux_layers {

int WriteAll(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

int WriteFileAt(int dirfd, const char* path, const char* text) {
  int fd = ::openat(dirfd, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = WriteAll(fd, text, CStrLen(text));
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

size_t FormatUint(uint64_t value, char* buf, size_t size) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < sizeof(tmp));
  size_t len = 0;
  while (n > 0 && len + 1 < size) buf[len++] = tmp[--n];
  if (size > 0) buf[len] = '\0';
  return len;
}

size_t CStrLen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

int SetDefaultDisposition(int sig) {
  // The kernel's struct sigaction on every architecture this builds for (x86-64, arm64, and their
  // 32-bit forms): handler, flags, restorer, then the mask as one 64-bit word.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
  } action = {SIG_DFL, 0, nullptr, 0};
  return syscall(SYS_rt_sigaction, sig, &action, nullptr, sizeof(action.mask)) == 0 ? 0 : errno;
}

int ResetAllSignals() {
  constexpr int kLastSignal = 64;  // _NSIG - 1 on Linux; glibc's NSIG is 65.
  for (int sig = 1; sig <= kLastSignal; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (int err = SetDefaultDisposition(sig); err != 0) return err;
  }
  sigset_t none;
  sigemptyset(&none);
  return sigprocmask(SIG_SETMASK, &none, nullptr) == 0 ? 0 : errno;
}

[[noreturn]] void MirrorStatus(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  SetDefaultDisposition(sig);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

}  // namespace sandbox::linux_layers
