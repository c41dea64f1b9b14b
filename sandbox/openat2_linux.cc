// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: the kernel resolves
// the whole path in one call and refuses, atomically, any step that leaves the directory or meets a
// link. Linux 5.6+. Called through syscall(2) because glibc gained a wrapper only in 2.38 (not
// portable to the C libraries we build against).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "sandbox/open_beneath.h"
#include "sandbox/system_headers/linux_openat2.h"

namespace sandbox::internal {
namespace {

constexpr uint64_t kResolve = linux_abi::kResolveBeneath | linux_abi::kResolveNoSymlinks |
                              linux_abi::kResolveNoMagiclinks;

int Openat2(int dir_fd, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve) {
  linux_abi::OpenHow how{};
  how.flags = flags;
  how.mode = mode;
  how.resolve = resolve;
  return static_cast<int>(::syscall(__NR_openat2, dir_fd, path, &how, sizeof(how)));
}

}  // namespace

bool Openat2Available() {
  // A functional probe: "." beneath "/" must open. O_PATH needs no read permission, and Landlock
  // does not judge O_PATH opens, so a process already under Landlock still finds openat2. ENOSYS
  // (old kernel) or EPERM (a seccomp filter, as some container runtimes install) both mean: use
  // the walk. (An absolute path would not do: RESOLVE_BENEATH refuses it with EXDEV.)
  static const bool available = [] {
    const int dir = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return false;
    const int fd = Openat2(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, kResolve);
    ::close(dir);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }();
  return available;
}

RawOpen Openat2Beneath(int dir_fd, const std::string& rel, int flags, mode_t mode) {
  // The kernel rejects a non-zero mode unless the open can create (EINVAL). O_TMPFILE includes the
  // O_DIRECTORY bit, so it is tested as a whole.
  const bool creates = (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
  const uint64_t how_mode = creates ? mode : 0;
  const uint64_t how_flags = static_cast<unsigned>(flags | O_NOFOLLOW | O_CLOEXEC);
  int fd;
  int attempts = 0;
  do {
    fd = Openat2(dir_fd, rel.c_str(), how_flags, how_mode, kResolve);
    // EAGAIN: RESOLVE_BENEATH saw a concurrent rename or mount and declined to guess; retrying is
    // what openat2(2) advises. Bounded, so a hostile renamer cannot spin us forever.
  } while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++attempts < 16)));
  if (fd < 0) return RawOpen{UniqueFd(), errno};
  return RawOpen{UniqueFd(fd), 0};
}

}  // namespace sandbox::internal
