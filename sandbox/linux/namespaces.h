// Namespaces: user (with a uid/gid map), mount (the workspace read-write, everything else read-only,
// a private /tmp), pid (a small init as pid 1; everything in the namespace dies with it), net
// (loopback only, down by default), ipc, uts. Unprivileged where the kernel allows: the child maps
// its own uid and gid, which needs no privilege.
//
// Two groups of steps, at the two places of the runner's child setup:
//   IsolateSteps  (before rlimits): unshare, uid/gid map, mounts, hostname, loopback.
//   PidNamespaceSteps (after the fds are closed, before the capability drop): fork the namespace's
//     init and the command under it; the runner's direct child stays outside as a waiter that mirrors
//     the command's exit status or signal, so the runner sees the command's own result.
// Process tree of a run with a pid namespace:
//   runner -> waiter (runner's pid ns, process group leader) -> init (pid 1) -> command (pid 2)
// The waiter and init close every fd (the runner's error pipe and the output pipes included), so the
// runner sees EOF exactly when the command's exec closes the error pipe. A SIGKILL to the group
// reaches all three; init has PR_SET_PDEATHSIG(SIGKILL) too. When init exits, the kernel kills
// every process left in the namespace, double-forked daemons included.
//
// Thread-safety: PrepareNamespaces and ProbeNamespaces are thread-safe (ProbeNamespaces forks once
// and caches). The steps are async-signal-safe.
#ifndef SANDBOX_LINUX_NAMESPACES_H_
#define SANDBOX_LINUX_NAMESPACES_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/linux/child_step.h"

namespace sandbox::linux_layers {

struct NamespaceOptions {
  bool user = true;
  bool mount = true;   // Needs `workspace`.
  bool pid = true;
  bool net = true;
  bool ipc = true;
  bool uts = true;
  std::string workspace;  // Absolute; stays read-write, the rest of the tree becomes read-only.
  bool private_tmp = true;
  bool loopback_up = false;  // Bring `lo` up inside the net namespace (still no route out).
  std::string hostname = "sandbox";
};

struct PreparedNamespaces {
  NamespaceOptions options;
  int unshare_flags = 0;
  std::string uid_map;  // "<inside> <outside> 1"
  std::string gid_map;
  std::vector<std::string> workspace_dirs;  // Ancestors to create in the private /tmp, outermost first.
  mutable int workspace_tree = -1;          // open_tree clone of the workspace (child memory).
};

// Validates the options and computes the maps and the mkdir chain. EINVAL for a bad workspace.
absl::StatusOr<PreparedNamespaces> PrepareNamespaces(const NamespaceOptions& options);

std::vector<LayerStep> IsolateSteps(const PreparedNamespaces& prepared);
// IsolateSteps without the unshare: for a process cloned into the namespaces (the isolation pool's
// seed, zygote.h), which then sets them up the same way.
std::vector<LayerStep> SetupSteps(const PreparedNamespaces& prepared);
// Mounts a /proc that shows the caller's pid namespace; for its init or a process inside it.
LayerStep MountProcStep();
std::vector<LayerStep> PidNamespaceSteps(const PreparedNamespaces& prepared);

// Whether unprivileged-style namespace creation works here: tried once in a forked child with the
// flags `options` asks for. OK, or EUNSUPPORTED with the failing call and the sysctls that explain it.
absl::Status ProbeNamespaces(const NamespaceOptions& options);

// The layer names a prepared set puts in force: "userns", "mountns", "pidns", "netns", ...
std::vector<std::string> NamespaceLayerNames(const PreparedNamespaces& prepared);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_NAMESPACES_H_
