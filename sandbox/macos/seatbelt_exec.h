// Runs a request under sandbox-exec with the Seatbelt profile of `policy`. macOS only (BUILD selects
// it there); elsewhere the target is incompatible.
//
// Thread-safety: as sandbox::Run.
#ifndef SANDBOX_MACOS_SEATBELT_EXEC_H_
#define SANDBOX_MACOS_SEATBELT_EXEC_H_

#include "absl/status/statusor.h"
#include "sandbox/macos/seatbelt.h"
#include "sandbox/runner.h"

namespace sandbox::macos {

// EUNSUPPORTED when /usr/bin/sandbox-exec is missing; otherwise Run's errors. The result's
// layers_in_force gains "seatbelt".
absl::StatusOr<RunResult> RunUnderSeatbelt(const RunRequest& request, const SeatbeltPolicy& policy);

}  // namespace sandbox::macos

#endif  // SANDBOX_MACOS_SEATBELT_EXEC_H_
