// Internal to //sandbox:workspace: the two ways of opening a path beneath a directory fd without
// following symlinks. workspace.cc turns their errno into policy errors; these functions only open.
//
// Both take a path already normalised by Workspace::CheckRelative: relative, '/'-separated, no
// empty, "." (except the whole path ".") or ".." components. Neither follows a symlink in any
// component, the last included. The errno of a refused symlink differs between platforms and
// strategies; ExplainOpenError turns it into ELOOP.
//
// Thread-safety: reentrant; safe from any thread. Not async-signal-safe.
#ifndef SANDBOX_OPEN_BENEATH_H_
#define SANDBOX_OPEN_BENEATH_H_

#include <sys/types.h>

#include <string>

#include "sandbox/unique_fd.h"

namespace sandbox::internal {

// An fd, or the errno of the step that failed.
struct RawOpen {
  UniqueFd fd;
  int err = 0;
};

// Whether openat2 with RESOLVE_BENEATH works here (kernel >= 5.6, not filtered by seccomp). Probed
// once per process; false in builds without the Linux layers.
bool Openat2Available();

// openat2(dir_fd, rel, {flags | O_NOFOLLOW | O_CLOEXEC, mode,
//   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS}). EXDEV if the path would leave
// dir_fd, ELOOP on any symlink. ENOSYS in builds without the Linux layers.
RawOpen Openat2Beneath(int dir_fd, const std::string& rel, int flags, mode_t mode);

// The portable walk: openat(O_DIRECTORY | O_NOFOLLOW) for each directory component, each checked
// with fstat, then openat(flags | O_NOFOLLOW) for the last one.
RawOpen WalkBeneath(int dir_fd, const std::string& rel, int flags, mode_t mode);

// The walk for a directory, creating each missing component with mkdirat(0755). Never follows a
// symlink; a component that exists and is not a directory (or is a symlink) fails.
RawOpen MakeDirsBeneath(int dir_fd, const std::string& rel);

// For messages only, after an open of `rel` failed with `err`: ELOOP if some component of `rel` is
// now a symlink, else `err`. openat2 reports a symlink met with O_DIRECTORY as ENOTDIR, the walk as
// ELOOP; this makes both strategies name the same reason. Opens directories only (no side effects).
int ExplainOpenError(int dir_fd, const std::string& rel, int err);

}  // namespace sandbox::internal

#endif  // SANDBOX_OPEN_BENEATH_H_
