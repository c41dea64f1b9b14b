#include "sandbox/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sandbox/errors.h"
#include "sandbox/open_beneath.h"
#include "sandbox/quote.h"
#include "sandbox/status_macros.h"

namespace sandbox {
namespace {

using internal::RawOpen;

// Temporary files of WriteFileAtomic: ".sbtmp." + 16 hex digits, fixed length so that a leaf of
// NAME_MAX bytes still has a temporary name that fits.
constexpr absl::string_view kTempPrefix = ".sbtmp.";

// Links followed by Resolve before it gives up, as the kernel's MAXSYMLINKS.
constexpr int kMaxSymlinkHops = 40;

absl::Status Denied(absl::string_view reason, absl::string_view rel) {
  return MakeError(ErrorCode::kEPERM, absl::StrCat(reason, ": ", Quote(rel)));
}

// Turns the errno of an open beneath the root into a policy error naming `rel`.
absl::Status OpenError(int err, absl::string_view rel) {
  switch (err) {
    case ELOOP:
      return Denied("symbolic link not followed (the workspace opens no symlink)", rel);
    case EXDEV:
      return Denied("path escapes workspace", rel);
    case ENOENT:
      return MakeError(ErrorCode::kENOENT, absl::StrCat("no such file: ", Quote(rel)));
    case ENOTDIR:
      return MakeError(ErrorCode::kENOENT,
                       absl::StrCat("not a directory: a component of ", Quote(rel), " is a file"));
    case EISDIR:
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("is a directory: ", Quote(rel)));
    default:
      return ErrnoError(err, absl::StrCat("open(", Quote(rel), ")"));
  }
}

std::vector<std::string> SplitPath(absl::string_view path) {
  return absl::StrSplit(path, '/', absl::SkipEmpty());
}

absl::StatusOr<std::string> ReadLink(const std::string& path) {
  std::string target(PATH_MAX + 1, '\0');
  const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n < 0) return ErrnoError(errno, absl::StrCat("readlink(", Quote(path), ")"));
  if (static_cast<size_t>(n) == target.size()) {
    return ErrnoError(ENAMETOOLONG, absl::StrCat("readlink(", Quote(path), ")"));
  }
  target.resize(static_cast<size_t>(n));
  return target;
}

// Opens `norm` (already through CheckRelative) with the chosen strategy. Raw: no type checks.
RawOpen OpenRaw(int root_fd, OpenStrategy strategy, const std::string& norm, int flags,
                mode_t mode) {
  RawOpen opened = strategy == OpenStrategy::kOpenat2
                       ? internal::Openat2Beneath(root_fd, norm, flags, mode)
                       : internal::WalkBeneath(root_fd, norm, flags, mode);
  if (opened.err != 0) opened.err = internal::ExplainOpenError(root_fd, norm, opened.err);
  return opened;
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, what);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string TempName() {
  absl::BitGen gen;
  return absl::StrFormat("%s%016x", kTempPrefix, absl::Uniform<uint64_t>(gen));
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// The permission bits the replacement of `leaf` gets: the old file's, or 0644 for a new one.
// Racy, and need not be otherwise: rename never follows the name it replaces. The check gives a
// clear error for a symlink, directory or special file, which the rename would replace or fail on.
absl::StatusOr<mode_t> ModeToKeep(int dir_fd, const std::string& leaf, absl::string_view rel) {
  struct stat st;
  if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return static_cast<mode_t>(0644);
    return ErrnoError(errno, absl::StrCat("fstatat(", Quote(rel), ")"));
  }
  if (S_ISLNK(st.st_mode)) return OpenError(ELOOP, rel);
  if (S_ISDIR(st.st_mode)) return OpenError(EISDIR, rel);
  if (!S_ISREG(st.st_mode)) return Denied("not a regular file or directory", rel);
  return static_cast<mode_t>(st.st_mode & 07777);
}

struct TempFile {
  std::string name;
  UniqueFd fd;
};

// A new, empty file with a random name in `dir_fd`. O_EXCL: never an existing file or a link.
absl::StatusOr<TempFile> CreateTempFile(int dir_fd, absl::string_view rel) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string name = TempName();
    const int fd = ::openat(dir_fd, name.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return TempFile{std::move(name), UniqueFd(fd)};
    if (errno != EEXIST && errno != EINTR) break;
  }
  return ErrnoError(errno, absl::StrCat("openat(temporary file for ", Quote(rel), ")"));
}

// Writes `data`, sets `mode`, fsyncs and closes: the file's content is durable when this is OK.
absl::Status FillAndClose(UniqueFd fd, absl::string_view data, mode_t mode, absl::string_view rel) {
  SB_RETURN_IF_ERROR(WriteAll(fd.get(), data, absl::StrCat("write(", Quote(rel), ")")));
  if (::fchmod(fd.get(), mode) != 0) return ErrnoError(errno, absl::StrCat("fchmod(", Quote(rel), ")"));
  if (::fsync(fd.get()) != 0) return ErrnoError(errno, absl::StrCat("fsync(", Quote(rel), ")"));
  // close() can report a deferred write error (NFS); the data is not safe until it returns 0.
  if (::close(fd.release()) != 0) return ErrnoError(errno, absl::StrCat("close(", Quote(rel), ")"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Workspace> Workspace::Open(absl::string_view root, WorkspaceOptions options) {
  if (root.empty()) return MakeError(ErrorCode::kEINVAL, "workspace root must not be empty");
  const std::string root_str(root);
  // The root is the operator's choice, not agent input: resolving it once here is enough.
  std::unique_ptr<char, decltype(&::free)> real(::realpath(root_str.c_str(), nullptr), &::free);
  if (real == nullptr) {
    return ErrnoError(errno, absl::StrCat("realpath(", Quote(root_str), ")"));
  }
  const int fd = ::open(real.get(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("open(", Quote(real.get()), ")"));
  auto root_fd = std::make_shared<UniqueFd>(fd);

  const bool have_openat2 = internal::Openat2Available();
  switch (options.strategy) {
    case OpenStrategy::kAuto:
      options.strategy = have_openat2 ? OpenStrategy::kOpenat2 : OpenStrategy::kWalk;
      break;
    case OpenStrategy::kOpenat2:
      if (!have_openat2) {
        return MakeError(ErrorCode::kEUNSUPPORTED,
                         "openat2 is not available (kernel before 5.6, hidden by seccomp, or a "
                         "build without the Linux layers); use OpenStrategy::kWalk or kAuto");
      }
      break;
    case OpenStrategy::kWalk:
      break;
  }
  return Workspace(std::string(real.get()), std::move(root_fd), std::move(options));
}

absl::StatusOr<std::string> Workspace::CheckRelative(absl::string_view rel) const {
  // Order matters only for which reason is named; every check must pass.
  if (rel.find('\0') != absl::string_view::npos) return Denied("NUL byte not allowed in path", rel);
  if (rel.empty()) return Denied("empty path not allowed", rel);
  if (rel.size() > kMaxPathBytes) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrFormat("path too long: %d bytes > %d: %s", rel.size(),
                                     kMaxPathBytes, Quote(rel, 64)));
  }
  // A leading backslash is an absolute path on Windows (the seed's rule); elsewhere it is refused
  // because its meaning depends on the platform (see the header).
  if (rel.front() == '/' || rel.front() == '\\') return Denied("absolute path not allowed", rel);
  if (rel.find('\\') != absl::string_view::npos) return Denied("backslash not allowed in path", rel);
  std::vector<absl::string_view> kept;
  for (absl::string_view part : absl::StrSplit(rel, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return Denied("parent traversal not allowed", rel);
    if (part.size() > kMaxNameBytes) {
      return MakeError(ErrorCode::kEINVAL,
                       absl::StrFormat("path component too long: %d bytes > %d: %s", part.size(),
                                       kMaxNameBytes, Quote(part, 64)));
    }
    kept.push_back(part);
  }
  if (kept.empty()) return std::string(".");
  return absl::StrJoin(kept, "/");
}

absl::StatusOr<std::string> Workspace::Resolve(absl::string_view rel, bool must_exist) const {
  SB_ASSIGN_OR_RETURN(const std::string norm, CheckRelative(rel));
  const std::vector<std::string> root_parts = SplitPath(root_);
  // realpath(3) semantics, but a missing tail is kept, and dangling links are followed as far as
  // their targets go, so a link to a file outside that does not exist yet is still judged outside.
  std::vector<std::string> real = root_parts;
  std::deque<std::string> pending;
  for (std::string& part : SplitPath(norm)) pending.push_back(std::move(part));
  bool missing = false;
  int hops = 0;
  while (!pending.empty()) {
    const std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {  // Only from a link target; the caller's own ".." was refused above.
      if (!real.empty()) real.pop_back();
      continue;
    }
    if (missing) {
      real.push_back(part);
      continue;
    }
    const std::string candidate = absl::StrCat("/", absl::StrJoin(real, "/"),
                                               real.empty() ? "" : "/", part);
    struct stat st;
    if (::lstat(candidate.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        return ErrnoError(errno, absl::StrCat("lstat(", Quote(candidate), ")"));
      }
      missing = true;
      real.push_back(part);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      real.push_back(part);
      continue;
    }
    if (++hops > kMaxSymlinkHops) return Denied("too many levels of symbolic links", rel);
    SB_ASSIGN_OR_RETURN(const std::string target, ReadLink(candidate));
    if (absl::StartsWith(target, "/")) real.clear();
    std::vector<std::string> target_parts = SplitPath(target);
    pending.insert(pending.begin(), target_parts.begin(), target_parts.end());
  }
  // Beneath the root by whole components: "/tmp/root-evil" shares a string prefix with
  // "/tmp/root" but not its components.
  if (real.size() < root_parts.size() ||
      !std::equal(root_parts.begin(), root_parts.end(), real.begin())) {
    return Denied("path escapes workspace", rel);
  }
  if (must_exist && missing) {
    return MakeError(ErrorCode::kENOENT, absl::StrCat("no such file: ", Quote(rel)));
  }
  return absl::StrCat("/", absl::StrJoin(real, "/"));
}

absl::StatusOr<UniqueFd> Workspace::OpenBeneath(absl::string_view rel, int flags,
                                                mode_t mode) const {
  SB_ASSIGN_OR_RETURN(const std::string norm, CheckRelative(rel));
  // O_TRUNC waits until the checks below pass, so a refused open has truncated nothing. O_NONBLOCK
  // keeps a FIFO's open from blocking until we have seen it is one.
  const bool truncate = (flags & O_TRUNC) != 0 && (flags & O_ACCMODE) != O_RDONLY;
  RawOpen opened =
      OpenRaw(root_fd_->get(), options_.strategy, norm, (flags & ~O_TRUNC) | O_NONBLOCK, mode);
  if (opened.err != 0) return OpenError(opened.err, rel);
  UniqueFd fd = std::move(opened.fd);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("fstat(", Quote(rel), ")"));
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return Denied("not a regular file or directory", rel);
  }
  if (S_ISREG(st.st_mode) && st.st_nlink > 1 && !options_.allow_hard_links) {
    return Denied(absl::StrFormat("file has %d hard links, whose other names may lie outside the "
                                  "workspace; refused",
                                  static_cast<uint64_t>(st.st_nlink)),
                  rel);
  }
  if ((flags & O_NONBLOCK) == 0) {
    const int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
      return ErrnoError(errno, absl::StrCat("fcntl(", Quote(rel), ", F_SETFL)"));
    }
  }
  if (truncate && S_ISREG(st.st_mode) && ::ftruncate(fd.get(), 0) != 0) {
    return ErrnoError(errno, absl::StrCat("ftruncate(", Quote(rel), ")"));
  }
  return fd;
}

absl::StatusOr<std::string> Workspace::ReadFile(absl::string_view rel, uint64_t max_bytes) const {
  SB_ASSIGN_OR_RETURN(const UniqueFd fd, OpenBeneath(rel, O_RDONLY));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("fstat(", Quote(rel), ")"));
  if (S_ISDIR(st.st_mode)) return OpenError(EISDIR, rel);
  const auto too_large = [&](uint64_t seen) {
    return MakeError(ErrorCode::kEFBIG,
                     absl::StrFormat("file too large: %s (%d bytes > %d); read a range",
                                     Quote(rel), seen, max_bytes));
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large(st.st_size);
  // Read up to one byte past the cap: the file may have grown since the fstat.
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[64 * 1024];
  while (out.size() <= max_bytes) {
    const size_t want = std::min<uint64_t>(sizeof(buf), max_bytes + 1 - out.size());
    const ssize_t n = ::read(fd.get(), buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("read(", Quote(rel), ")"));
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
  return too_large(out.size());
}

absl::StatusOr<std::string> Workspace::ReadRange(absl::string_view rel, uint64_t offset,
                                                 uint64_t length) const {
  if (offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    return MakeError(ErrorCode::kEINVAL, absl::StrFormat("offset %d is out of range", offset));
  }
  SB_ASSIGN_OR_RETURN(const UniqueFd fd, OpenBeneath(rel, O_RDONLY));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("fstat(", Quote(rel), ")"));
  if (S_ISDIR(st.st_mode)) return OpenError(EISDIR, rel);
  std::string out;
  char buf[64 * 1024];
  while (out.size() < length) {
    const size_t want = std::min<uint64_t>(sizeof(buf), length - out.size());
    const ssize_t n = ::pread(fd.get(), buf, want, static_cast<off_t>(offset + out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("pread(", Quote(rel), ")"));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::Status Workspace::WriteFileAtomic(absl::string_view rel, absl::string_view data) const {
  SB_ASSIGN_OR_RETURN(const std::string norm, CheckRelative(rel));
  if (norm == ".") {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("cannot write the workspace root: ", Quote(rel)));
  }
  const size_t slash = norm.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : norm.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? norm : norm.substr(slash + 1);

  RawOpen dir = OpenRaw(root_fd_->get(), options_.strategy, parent, O_RDONLY | O_DIRECTORY, 0);
  if (dir.err == ENOENT) {
    dir = internal::MakeDirsBeneath(root_fd_->get(), parent);
    if (dir.err != 0) dir.err = internal::ExplainOpenError(root_fd_->get(), parent, dir.err);
  }
  if (dir.err != 0) return OpenError(dir.err, rel);
  // From here on every name is one component relative to this fd: nothing is resolved again.
  const int dir_fd = dir.fd.get();

  SB_ASSIGN_OR_RETURN(const mode_t mode, ModeToKeep(dir_fd, leaf, rel));
  SB_ASSIGN_OR_RETURN(TempFile temp, CreateTempFile(dir_fd, rel));
  absl::Cleanup remove_temp = [&] { ::unlinkat(dir_fd, temp.name.c_str(), 0); };
  SB_RETURN_IF_ERROR(FillAndClose(std::move(temp.fd), data, mode, rel));
  if (::renameat(dir_fd, temp.name.c_str(), dir_fd, leaf.c_str()) != 0) {
    const int err = errno;
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) return OpenError(EISDIR, rel);
    return ErrnoError(err, absl::StrCat("renameat(", Quote(rel), ")"));
  }
  std::move(remove_temp).Cancel();
  // The rename is durable only once the directory entry is: fsync the directory.
  if (::fsync(dir_fd) != 0) {
    return ErrnoError(errno, absl::StrCat("fsync(directory of ", Quote(rel), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<FileEntry>> Workspace::ListFiles() const {
  std::vector<FileEntry> files;
  std::vector<std::string> dirs = {"."};
  const auto excluded = [&](absl::string_view name) {
    return std::find(options_.list_excludes.begin(), options_.list_excludes.end(), name) !=
           options_.list_excludes.end();
  };
  while (!dirs.empty()) {
    const std::string dir = std::move(dirs.back());
    dirs.pop_back();
    // Each directory is opened from the root, never through a link, so a directory swapped for a
    // symlink while we list is skipped, not followed.
    RawOpen opened = OpenRaw(root_fd_->get(), options_.strategy, dir, O_RDONLY | O_DIRECTORY, 0);
    if (opened.err != 0) {
      if (dir != "." && (opened.err == ENOENT || opened.err == ELOOP || opened.err == ENOTDIR)) {
        continue;  // Removed or replaced since we saw it.
      }
      return OpenError(opened.err, dir);
    }
    std::unique_ptr<DIR, DirCloser> stream(::fdopendir(opened.fd.get()));
    if (stream == nullptr) return ErrnoError(errno, absl::StrCat("fdopendir(", Quote(dir), ")"));
    opened.fd.release();  // Owned by the DIR stream now.
    const int dir_fd = ::dirfd(stream.get());
    errno = 0;
    while (const struct dirent* entry = ::readdir(stream.get())) {
      const absl::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string child = dir == "." ? std::string(name) : absl::StrCat(dir, "/", name);
      struct stat st;
      if (!CheckRelative(child).ok() ||
          ::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        errno = 0;  // Unaddressable, or gone since readdir: not listed.
        continue;
      }
      if (excluded(name)) {
        // Left out, whatever it is.
      } else if (S_ISDIR(st.st_mode)) {
        dirs.push_back(child);
      } else if (S_ISREG(st.st_mode) && !absl::StartsWith(name, kTempPrefix) &&
                 (st.st_nlink == 1 || options_.allow_hard_links)) {
        files.push_back(FileEntry{child, static_cast<uint64_t>(st.st_size)});
      }
      errno = 0;
    }
    if (errno != 0) return ErrnoError(errno, absl::StrCat("readdir(", Quote(dir), ")"));
  }
  std::sort(files.begin(), files.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  return files;
}

}  // namespace sandbox
