#include "sandbox/macos/seatbelt_exec.h"

#include <unistd.h>

#include "sandbox/errors.h"
#include "sandbox/status_macros.h"

namespace sandbox::macos {

absl::StatusOr<RunResult> RunUnderSeatbelt(const RunRequest& request, const SeatbeltPolicy& policy) {
  if (access("/usr/bin/sandbox-exec", X_OK) != 0) {
    return MakeError(ErrorCode::kEUNSUPPORTED, "seatbelt: /usr/bin/sandbox-exec is not available");
  }
  SB_ASSIGN_OR_RETURN(std::string profile, SeatbeltProfile(policy));
  RunRequest wrapped = request;
  wrapped.argv = SandboxExecArgv(profile, request.argv);
  SB_ASSIGN_OR_RETURN(RunResult result, Run(wrapped));
  result.layers_in_force.push_back("seatbelt");
  return result;
}

}  // namespace sandbox::macos
