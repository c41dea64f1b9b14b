// The portable way to open beneath a directory: one openat(O_NOFOLLOW) per component, so the kernel
// never resolves more than one name at a time and never follows a link. A component swapped for a
// symlink between two steps makes the next openat fail; it cannot redirect it. This is what macOS
// uses, and Linux when openat2 is missing (kernels before 5.6, or a seccomp filter that hides it).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "sandbox/open_beneath.h"

namespace sandbox::internal {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

int OpenAtRetry(int dir_fd, const std::string& name, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::openat(dir_fd, name.c_str(), flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

RawOpen Fail(int err) { return RawOpen{UniqueFd(), err}; }

// Opens directory `name` in `dir_fd` without following it; `create` makes it first if missing.
RawOpen OpenDirStep(int dir_fd, const std::string& name, bool create) {
  int fd = OpenAtRetry(dir_fd, name, kDirFlags, 0);
  if (fd < 0 && errno == ENOENT && create) {
    // EEXIST: someone made it between our open and mkdir; the second open judges what it is.
    if (::mkdirat(dir_fd, name.c_str(), 0755) != 0 && errno != EEXIST) return Fail(errno);
    fd = OpenAtRetry(dir_fd, name, kDirFlags, 0);
  }
  if (fd < 0) return Fail(errno);
  UniqueFd owned(fd);
  struct stat st;
  if (::fstat(owned.get(), &st) != 0) return Fail(errno);
  // O_DIRECTORY already guarantees this; the fstat is the belt to its braces on odd platforms.
  if (!S_ISDIR(st.st_mode)) return Fail(ENOTDIR);
  return RawOpen{std::move(owned), 0};
}

RawOpen Walk(int dir_fd, const std::string& rel, bool create_dirs, bool leaf_is_dir, int flags,
             mode_t mode) {
  std::vector<std::string> parts =
      rel == "." ? std::vector<std::string>{} : absl::StrSplit(rel, '/');
  UniqueFd current;
  int current_fd = dir_fd;
  const size_t dir_steps = leaf_is_dir || parts.empty() ? parts.size() : parts.size() - 1;
  for (size_t i = 0; i < dir_steps; ++i) {
    RawOpen step = OpenDirStep(current_fd, parts[i], create_dirs);
    if (step.err != 0) return step;
    current = std::move(step.fd);
    current_fd = current.get();
  }
  if (leaf_is_dir) {
    if (current.valid()) return RawOpen{std::move(current), 0};
    int fd = OpenAtRetry(dir_fd, ".", kDirFlags, 0);
    return fd < 0 ? Fail(errno) : RawOpen{UniqueFd(fd), 0};
  }
  const std::string leaf = parts.empty() ? "." : parts.back();
  int fd = OpenAtRetry(current_fd, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Fail(errno);
  return RawOpen{UniqueFd(fd), 0};
}

}  // namespace

// Platforms disagree on the errno of O_NOFOLLOW meeting a symlink (Linux ELOOP, FreeBSD EMLINK;
// with O_DIRECTORY, and in openat2, ENOTDIR): look at the components to name the real reason.
int ExplainOpenError(int dir_fd, const std::string& rel, int err) {
  if (err != ELOOP && err != EMLINK && err != ENOTDIR) return err;
  std::vector<std::string> parts =
      rel == "." ? std::vector<std::string>{} : absl::StrSplit(rel, '/');
  UniqueFd current;
  int current_fd = dir_fd;
  for (size_t i = 0; i < parts.size(); ++i) {
    struct stat st;
    if (::fstatat(current_fd, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return err;
    if (S_ISLNK(st.st_mode)) return ELOOP;
    if (i + 1 == parts.size() || !S_ISDIR(st.st_mode)) return err;
    const int fd = OpenAtRetry(current_fd, parts[i], kDirFlags, 0);
    if (fd < 0) return err;
    current.reset(fd);
    current_fd = fd;
  }
  return err;
}

RawOpen WalkBeneath(int dir_fd, const std::string& rel, int flags, mode_t mode) {
  return Walk(dir_fd, rel, /*create_dirs=*/false, /*leaf_is_dir=*/false, flags, mode);
}

RawOpen MakeDirsBeneath(int dir_fd, const std::string& rel) {
  return Walk(dir_fd, rel, /*create_dirs=*/true, /*leaf_is_dir=*/true, 0, 0);
}

}  // namespace sandbox::internal
