// The macOS layer: a Seatbelt (SBPL) profile generated from the same policy as the Linux layers
// (the workspace writable, everything else readable but not writable, the network denied), for
// `sandbox-exec -p PROFILE -- CMD...`.
//
// SeatbeltProfile is a pure function (no macOS API), so it is golden-tested on Linux; running
// sandbox-exec is in seatbelt_exec.{h,cc}, built only on macOS.
//
// Thread-safety: pure functions; safe from any thread. Not async-signal-safe.
#ifndef SANDBOX_MACOS_SEATBELT_H_
#define SANDBOX_MACOS_SEATBELT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sandbox::macos {

struct SeatbeltPolicy {
  std::string workspace;                    // Absolute, symlinks resolved (/tmp is /private/tmp).
  std::vector<std::string> extra_writable = {};  // More absolute paths writable beneath (a temp dir).
  bool allow_network = false;               // false: only unix-domain sockets.
};

// The SBPL text for `policy`. EINVAL for a relative path, a path with a NUL or newline, or "/".
absl::StatusOr<std::string> SeatbeltProfile(const SeatbeltPolicy& policy);

// `s` as an SBPL string literal: quoted, with backslash and double quote escaped.
std::string SbplQuote(absl::string_view s);

// {"/usr/bin/sandbox-exec", "-p", profile, "--", argv...}
std::vector<std::string> SandboxExecArgv(const std::string& profile, const std::vector<std::string>& argv);

}  // namespace sandbox::macos

#endif  // SANDBOX_MACOS_SEATBELT_H_
