// The workspace: the one directory tree the agent may read and write, and the path policy guarding it.
//
// Every path a caller names is relative to the root. It is judged twice: lexically (no empty, absolute,
// backslash, NUL or `..` component) and by the real object it names, which must lie beneath the
// root by path components (so `/tmp/root-evil` is not beneath `/tmp/root`). Opening is race-free: on
// Linux through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from a directory
// fd of the root; elsewhere by walking component by component with openat(O_NOFOLLOW). A symlink
// swapped in between a check and an open is therefore refused, not followed.
//
// Policy decisions (each has a test in workspace_test.cc):
// - Symlinks: Resolve() follows them (realpath semantics) to judge where a path really leads and
//   refuses any that leads out. Every operation that touches a file (OpenBeneath and all below it)
//   follows NO symlink, not even one pointing inside: following "only links that stay inside" cannot
//   be done without a check-then-use race, and openat2's RESOLVE_NO_SYMLINKS cannot tell them apart.
//   ListFiles does not list symlinks. A caller who wants a linked file names its target.
// - Backslashes: refused anywhere in a path. POSIX allows them in names, but to the agent (and to
//   Windows) `a\..\b` means traversal; a path whose meaning depends on the platform is refused.
//   ListFiles leaves out names the policy would refuse, so every listed path can be opened.
// - Non-UTF-8 bytes: allowed. POSIX names are bytes and the policy judges bytes; a file system that
//   wants UTF-8 (APFS) refuses on its own. Messages show such bytes as \xNN (sandbox/quote.h).
// - Hard links: a hard link is the same inode under another name; no path check can see where the
//   other name lives (perhaps outside the root, linked in by a process the agent ran). OpenBeneath
//   refuses a regular file with more than one link (EPERM), for reading and writing, unless
//   WorkspaceOptions::allow_hard_links; O_TRUNC is applied only after that check, so a refused open
//   has changed nothing. WriteFileAtomic renames over a name and never writes the old inode, so it
//   is allowed and leaves the other names' content alone. The kernel layers (Landlock, a mount
//   namespace, fs.protected_hardlinks) keep a sandboxed command from making such links at all.
// - Special files: OpenBeneath opens only regular files and directories. A FIFO, socket or device is
//   refused with EPERM; opens use O_NONBLOCK until that check, so a FIFO cannot hang a read.
// - Resolve() is a judgement for messages and callers that print paths; it is not race-free. All
//   I/O goes through OpenBeneath, which is.
//
// Errors carry codes from sandbox/errors.h: EPERM for a policy denial (with the reason and the quoted
// path in the message), ENOENT, EINVAL (malformed or too long, is a directory), EFBIG for a read over
// the cap (suggested action read_range), EUNSUPPORTED for a strategy this kernel or build lacks.
//
// Thread-safety: a Workspace is immutable after Open(); its methods may be called from any thread.
#ifndef SANDBOX_WORKSPACE_H_
#define SANDBOX_WORKSPACE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sandbox/unique_fd.h"

namespace sandbox {

// How OpenBeneath resolves a path. kAuto uses openat2 where the kernel has it and the walk otherwise
// (probed once per process); the others force one strategy (tests exercise both on Linux). kOpenat2
// is EUNSUPPORTED where openat2 is missing and in builds without the Linux layers.
enum class OpenStrategy { kAuto, kOpenat2, kWalk };

// Longest relative path accepted (bytes), and longest component; longer is EINVAL. PATH_MAX (4096
// on Linux) counts the terminating NUL, so the kernel takes at most 4095 bytes in one call; the
// limit is the same for both strategies although the walk passes one component at a time.
inline constexpr size_t kMaxPathBytes = 4095;
inline constexpr size_t kMaxNameBytes = 255;   // NAME_MAX on Linux and macOS.

struct WorkspaceOptions {
  OpenStrategy strategy = OpenStrategy::kAuto;
  // Names ListFiles leaves out at any depth: directories with all they hold, and files (a git
  // worktree's ".git" is a file).
  std::vector<std::string> list_excludes = {".git", "bazel-out", "__pycache__", ".cache",
                                            "node_modules"};
  // See "Hard links" above. Off: a regular file with st_nlink > 1 is refused by OpenBeneath.
  bool allow_hard_links = false;
};

struct FileEntry {
  std::string path;   // Relative to the root, '/'-separated.
  uint64_t size = 0;

  bool operator==(const FileEntry&) const = default;
};

class Workspace {
 public:
  // Opens `root` (must be an existing directory) and holds a directory fd to it. The root itself may
  // be reached through symlinks; its real path is what everything is judged against.
  static absl::StatusOr<Workspace> Open(absl::string_view root, WorkspaceOptions options = {});

  Workspace(Workspace&&) = default;
  Workspace& operator=(Workspace&&) = default;

  // The real, absolute path of the root.
  const std::string& root() const { return root_; }

  // The strategy OpenBeneath uses (kAuto resolved to kOpenat2 or kWalk at Open()).
  OpenStrategy strategy() const { return options_.strategy; }

  // Lexical policy only: the normalised relative path ("a/./b//c/" -> "a/b/c"; "" names nothing,
  // "." or "./" names the root and normalises to "."), or EPERM naming the reason
  // ("parent traversal not allowed: '../x'", "absolute path not allowed: '/etc'", ...), or EINVAL
  // for a path over kMaxPathBytes or a component over kMaxNameBytes.
  absl::StatusOr<std::string> CheckRelative(absl::string_view rel) const;

  // Lexical policy, then the real path (symlinks resolved, dangling ones too) must lie beneath the
  // root: EPERM "path escapes workspace: '<rel>'" otherwise. Returns the absolute real path. With
  // must_exist, a missing file is ENOENT; otherwise the missing tail is appended to the deepest
  // existing ancestor's real path.
  absl::StatusOr<std::string> Resolve(absl::string_view rel, bool must_exist = false) const;

  // Opens `rel` beneath the root without following any symlink, race-free. `flags` are open(2)
  // flags (O_NOFOLLOW and O_CLOEXEC are added); `mode` applies with O_CREAT. The result is a regular
  // file or a directory; see the header comment for special files and hard links.
  absl::StatusOr<UniqueFd> OpenBeneath(absl::string_view rel, int flags, mode_t mode = 0644) const;

  // Reads a whole regular file; EFBIG (suggested action read_range) when it is over `max_bytes`.
  absl::StatusOr<std::string> ReadFile(absl::string_view rel, uint64_t max_bytes) const;

  // Reads at most `length` bytes from `offset`; fewer at the end of the file, "" past it.
  absl::StatusOr<std::string> ReadRange(absl::string_view rel, uint64_t offset,
                                        uint64_t length) const;

  // Replaces the file atomically: a temporary file (O_EXCL, random name) in the same directory,
  // fsync, rename, fsync of the directory. Missing parent directories are created beneath the root
  // without following symlinks. On any failure the temporary file is removed and the old file is
  // untouched. An existing file keeps its permission bits; a new one gets 0644.
  absl::Status WriteFileAtomic(absl::string_view rel, absl::string_view data) const;

  // Every regular file beneath the root, sorted by path (bytewise), leaving out the excluded
  // names at any depth, symlinks (never followed), special files, names the lexical policy
  // refuses, files with several hard links (unless allowed), and temporary files of an
  // interrupted WriteFileAtomic: every listed path can be read.
  absl::StatusOr<std::vector<FileEntry>> ListFiles() const;

 private:
  Workspace(std::string root, std::shared_ptr<UniqueFd> root_fd, WorkspaceOptions options)
      : root_(std::move(root)), root_fd_(std::move(root_fd)), options_(std::move(options)) {}

  std::string root_;
  std::shared_ptr<UniqueFd> root_fd_;  // O_RDONLY | O_DIRECTORY: readable, so it can be fsynced.
  WorkspaceOptions options_;           // options_.strategy is never kAuto after Open().
};

}  // namespace sandbox

#endif  // SANDBOX_WORKSPACE_H_
