// Capability drop and no_new_privs: the two steps between the namespaces and Landlock.
//
// DropCapabilities empties the bounding set (so exec can never grant a capability again, not even to
// uid 0 or a file with file capabilities), locks the securebits that make uid 0 special across exec,
// clears the ambient set, and empties the effective, permitted and inheritable sets. NoNewPrivs sets
// PR_SET_NO_NEW_PRIVS, which Landlock and an unprivileged seccomp filter require, and which stops
// setuid binaries from gaining privilege.
//
// Thread-safety: PrepareCapabilityDrop is thread-safe; the steps are async-signal-safe.
#ifndef SANDBOX_LINUX_CAPABILITIES_H_
#define SANDBOX_LINUX_CAPABILITIES_H_

#include <array>

#include "absl/status/statusor.h"
#include "sandbox/linux/child_step.h"

namespace sandbox::linux_layers {

struct CapabilityDrop {
  int last_cap = 40;  // /proc/sys/kernel/cap_last_cap, read in the parent.
};

// Reads the highest capability number this kernel knows.
absl::StatusOr<CapabilityDrop> PrepareCapabilityDrop();

// The capability steps, in order. Steps that need CAP_SETPCAP (bounding set, securebits) do nothing
// when the child lacks it: a process without CAP_SETPCAP has nothing left for them to remove, since
// it is not root in its namespace (exec gives it no capabilities).
std::array<LayerStep, 4> DropCapabilitiesSteps(const CapabilityDrop& drop);

// prctl(PR_SET_NO_NEW_PRIVS, 1).
LayerStep NoNewPrivsStep();

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_CAPABILITIES_H_
