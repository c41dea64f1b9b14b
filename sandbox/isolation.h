// Kernel isolation for a run: which layers exist, which this machine offers, and a Run that applies
// the chosen ones in the order the kernel demands (DESIGN.md):
//
//   session/pgid -> cgroup -> userns -> uid/gid map -> mountns -> pid, net, ipc, uts -> rlimits
//   -> close fds -> pid-namespace init (or subreaper waiter) -> drop caps -> no_new_privs
//   -> Landlock -> seccomp (last) -> exec
//
// (The cgroup is joined before the namespaces are created, so the pid namespace's init and the
// waiter are counted by pids.max and killed by the cgroup too.)
//
// Each layer is probed at run time. A layer in `required` that is unavailable fails the run closed
// with EUNSUPPORTED and the reason; any other unavailable layer is skipped and named, with the
// reason, in RunResult::layers_unavailable. RunResult::layers_in_force lists what was applied.
//
// On Linux builds with the kernel layers (the default) the implementation is sandbox/linux; the
// portable build (--config=portable, macOS) reports every layer unavailable and runs the portable
// runner, so `require` fails closed there.
//
// Thread-safety: everything here may be called from several threads at once.
#ifndef SANDBOX_ISOLATION_H_
#define SANDBOX_ISOLATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sandbox/runner.h"

namespace sandbox {

enum class Layer {
  kUserNs,
  kMountNs,
  kPidNs,
  kNetNs,
  kIpcNs,
  kUtsNs,
  kCgroup,
  kReaper,
  kCapabilities,
  kNoNewPrivs,
  kLandlock,
  kSeccomp,
};

// Every layer, in application order.
const std::vector<Layer>& AllLayers();
// "userns", "mountns", "pidns", "netns", "ipcns", "utsns", "cgroup", "reaper", "caps", "nnp",
// "landlock", "seccomp": stable, used by flags and JSON.
absl::string_view LayerName(Layer layer);
// EINVAL naming the unknown layer and listing the known ones.
absl::StatusOr<Layer> ParseLayer(absl::string_view name);
// A comma-separated list ("landlock,seccomp"); "all" means every layer; "" the empty set.
absl::StatusOr<std::set<Layer>> ParseLayerList(absl::string_view list);

enum class SeccompProfileKind { kDefault, kStrict };

struct IsolationOptions {
  std::set<Layer> enabled;   // Layers to apply when available.
  std::set<Layer> required;  // Layers that must be applied: EUNSUPPORTED otherwise. Implies enabled.
  std::string workspace;     // Read-write for the mount namespace and Landlock. Empty: the cwd.
  bool allow_network = false;  // false: net namespace, seccomp and Landlock deny the network.
  SeccompProfileKind seccomp_profile = SeccompProfileKind::kDefault;
  std::optional<uint64_t> memory_bytes = 1ull << 30;  // cgroup memory limit.
  std::optional<uint64_t> pids = 512;                 // cgroup pids.max.
  std::optional<uint32_t> cpu_millis;                 // cgroup CPU bandwidth; 1000 = one CPU.

  // Every layer enabled, none required.
  static IsolationOptions AllLayers();
};

// The command-line form of IsolationOptions (the sandbox CLI's flags), kept here so every front end
// parses it the same way.
struct IsolationFlagValues {
  std::string isolate;     // --isolate=LIST: layers to apply when available ("all", "landlock,seccomp").
  std::string no_isolate;  // --no-isolate=LIST: removed from --isolate (e.g. all but netns).
  std::string require;     // --require=LIST: must apply, or the run fails closed (EUNSUPPORTED).
  bool allow_network = false;
  std::string seccomp = "default";  // "default" (denylist) or "strict" (allowlist).
  std::optional<uint64_t> memory_bytes = std::nullopt;
  std::optional<uint64_t> pids = std::nullopt;
  std::optional<uint32_t> cpu_millis = std::nullopt;
};

// EINVAL naming the bad flag value (unknown layer, unknown profile, a layer both required and
// removed). `workspace` becomes IsolationOptions::workspace.
absl::StatusOr<IsolationOptions> IsolationFromFlags(const IsolationFlagValues& flags, const std::string& workspace);

// True when `options` asks for any layer (enabled or required).
bool WantsIsolation(const IsolationOptions& options);

struct LayerStatus {
  Layer layer;
  bool available = false;
  std::string detail;  // How ("landlock ABI 7", "v1 memory,pids,cpu") or why not.
};

// What this machine offers, layer by layer. Probes are cached after the first call.
std::vector<LayerStatus> ProbeLayers();

// The `doctor` report: each layer and the facts that decide it.
struct DoctorReport {
  std::string platform;  // "linux 6.18.44 x86_64", "portable build"
  std::vector<LayerStatus> layers;
  std::vector<std::pair<std::string, std::string>> facts;  // ("landlock_abi", "7"), sysctls, ...
};
DoctorReport Doctor();
std::string DoctorText(const DoctorReport& report);
std::string DoctorJson(const DoctorReport& report);

// Run with the chosen isolation layers (see the top of this file). Errors: those of Run, EUNSUPPORTED
// for a required layer that is unavailable, EINVAL for a bad workspace.
absl::StatusOr<RunResult> RunIsolated(const RunRequest& request, const IsolationOptions& isolation);

// RunIsolated for many runs of one configuration, with each run's isolated process prepared ahead of
// it. On Linux a background thread starts the next run's process ("seed", sandbox/linux/zygote.h)
// while the current one runs: it is cloned into fresh namespaces, sets up the mounts and joins a
// fresh cgroup, then waits; a run hands it the command, so creating the namespaces and the cgroup
// migration (an RCU grace period on cgroup v1) are off the run's latency. Every seed serves exactly
// one run: nothing is shared between runs (see sandbox/linux/README.md). The result is the same as
// RunIsolated's (layers_in_force, layers_unavailable, limits, memory_limit_killed), and `required`
// fails closed the same way.
//
// A request whose workspace (IsolationOptions::workspace, or else the request's cwd) differs from the
// first request's, or whose argv and environment exceed 1 MiB, runs through RunIsolated. The
// portable build always does.
//
// Thread-safety: Run may be called from several threads at once (runs beyond the prepared one wait
// for a seed, which is then prepared even while other runs are in progress). The destructor waits
// for the background thread and ends the unused seed.
class IsolationPool {
 public:
  explicit IsolationPool(IsolationOptions options);
  ~IsolationPool();
  IsolationPool(const IsolationPool&) = delete;
  IsolationPool& operator=(const IsolationPool&) = delete;

  absl::StatusOr<RunResult> Run(const RunRequest& request);

  // Blocks until the next run's seed is ready (or failed to prepare); for benchmarks and tests that
  // want to measure or observe a steady state. Returns at once before the first Run.
  void WaitIdle();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sandbox

#endif  // SANDBOX_ISOLATION_H_
