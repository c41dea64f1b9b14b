// The workspace: the one directory tree the agent may read and write, and the path policy guarding it.
//
// Every path a caller names is relative to the root. It is judged twice: lexically (no empty, absolute,
// backslash-leading, NUL or `..` component) and by the real object it names, which must lie beneath the
// root by path components (so `/tmp/root-evil` is not beneath `/tmp/root`). Opening is race-free: on
// Linux through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from a directory
// fd of the root; elsewhere by walking component by component with openat(O_NOFOLLOW). A symlink
// swapped in between a check and an open is therefore refused, not followed.
//
// Errors carry codes from sandbox/errors.h: EPERM for a policy denial (with the reason in the
// message), ENOENT, EINVAL, EFBIG for a read over the cap.
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

// How OpenBeneath resolves a path. kAuto uses openat2 where the kernel has it and the walk otherwise;
// the others force one strategy (tests exercise both on Linux).
enum class OpenStrategy { kAuto, kOpenat2, kWalk };

struct WorkspaceOptions {
  OpenStrategy strategy = OpenStrategy::kAuto;
  // Path names of directories ListFiles leaves out (at any depth).
  std::vector<std::string> list_excludes = {".git", "bazel-out", "__pycache__", ".cache",
                                            "node_modules"};
};

struct FileEntry {
  std::string path;   // Relative to the root, '/'-separated.
  uint64_t size = 0;
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

  // Lexical policy only: the normalised relative path ("a/./b//c" -> "a/b/c"), or EPERM naming the
  // reason ("parent traversal not allowed: '../x'", "absolute path not allowed: '/etc'", ...).
  absl::StatusOr<std::string> CheckRelative(absl::string_view rel) const;

  // Lexical policy, then the real path (symlinks resolved) must lie beneath the root. Returns the
  // absolute real path. With must_exist, a missing file is ENOENT; otherwise the deepest existing
  // ancestor is judged.
  absl::StatusOr<std::string> Resolve(absl::string_view rel, bool must_exist = false) const;

  // Opens `rel` beneath the root without following any symlink, race-free. `flags` are open(2)
  // flags (O_NOFOLLOW and O_CLOEXEC are added); `mode` applies with O_CREAT.
  absl::StatusOr<UniqueFd> OpenBeneath(absl::string_view rel, int flags, mode_t mode = 0644) const;

  // Reads a whole regular file; EFBIG (suggested action read_range) when it is over `max_bytes`.
  absl::StatusOr<std::string> ReadFile(absl::string_view rel, uint64_t max_bytes) const;

  // Reads at most `length` bytes from `offset`.
  absl::StatusOr<std::string> ReadRange(absl::string_view rel, uint64_t offset,
                                        uint64_t length) const;

  // Replaces the file atomically: a temporary file in the same directory, fsync, rename, fsync of the
  // directory. Missing parent directories are created beneath the root.
  absl::Status WriteFileAtomic(absl::string_view rel, absl::string_view data) const;

  // Every regular file beneath the root, sorted, leaving out the excluded directories.
  absl::StatusOr<std::vector<FileEntry>> ListFiles() const;

 private:
  Workspace(std::string root, std::shared_ptr<UniqueFd> root_fd, WorkspaceOptions options)
      : root_(std::move(root)), root_fd_(std::move(root_fd)), options_(std::move(options)) {}

  std::string root_;
  std::shared_ptr<UniqueFd> root_fd_;  // O_DIRECTORY | O_PATH where available.
  WorkspaceOptions options_;
};

}  // namespace sandbox

#endif  // SANDBOX_WORKSPACE_H_
