// Landlock: the filesystem read-only outside the workspace and read-write inside it; TCP bind and
// connect denied (ABI >= 4); abstract unix sockets and signals scoped to the sandbox (ABI >= 6).
//
// PrepareLandlock (parent) probes the ABI and computes the access masks the kernel knows. The steps
// (child, after no_new_privs and before seccomp, whose filter must not block them yet) create the
// ruleset, open each path with O_PATH and add it, then restrict the child. Paths are opened in the
// child, after the mount namespace is set up, so a private /tmp is the one the rule names.
//
// Thread-safety: PrepareLandlock and LandlockAbi are thread-safe; the steps are async-signal-safe and
// keep their ruleset fd in the prepared object's memory (the child's copy).
#ifndef SANDBOX_LINUX_LANDLOCK_H_
#define SANDBOX_LINUX_LANDLOCK_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/linux/child_step.h"

namespace sandbox::linux_layers {

struct LandlockPolicy {
  std::vector<std::string> read_only = {"/"};  // Read and execute beneath these.
  std::vector<std::string> read_write;         // Everything beneath these (the workspace, ...).
  bool deny_tcp = true;                        // ABI >= 4: no TCP bind or connect at all.
  bool scope_ipc = true;                       // ABI >= 6: no abstract unix socket or signal out.
};

// The Landlock ABI version of the running kernel, or 0 with the reason in `why`.
int LandlockAbi(std::string* why = nullptr);

struct PreparedLandlock {
  int abi = 0;
  uint64_t handled_fs = 0;
  uint64_t handled_net = 0;
  uint64_t scoped = 0;
  uint64_t read_only_access = 0;
  uint64_t read_write_access = 0;
  size_t attr_size = 0;
  std::vector<std::string> read_only;
  std::vector<std::string> read_write;
  mutable int ruleset_fd = -1;  // Set by the first step, in the child.
};

// EUNSUPPORTED (with the reason) when the kernel has no Landlock; EINVAL for a relative path.
absl::StatusOr<PreparedLandlock> PrepareLandlock(const LandlockPolicy& policy);

// PrepareLandlock for a kernel of Landlock ABI `abi` (0: none, for the reason `why`), without
// probing: what each older kernel would be asked to handle, for tests on a machine that has one ABI.
absl::StatusOr<PreparedLandlock> PrepareLandlockForAbi(const LandlockPolicy& policy, int abi,
                                                       const std::string& why);

// create ruleset -> add a rule per path -> landlock_restrict_self. Requires no_new_privs.
std::array<LayerStep, 3> LandlockSteps(const PreparedLandlock& prepared);

// What the prepared ruleset enforces, for the result and `doctor`: "landlock(abi=7,fs,net,scope)".
std::string DescribeLandlock(const PreparedLandlock& prepared);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_LANDLOCK_H_
