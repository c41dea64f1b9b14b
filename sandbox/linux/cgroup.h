// A cgroup per command, with memory, pids and CPU limits: cgroup v2 first, the v1 controllers as the
// fallback (this machine mounts memory, pids and cpu as v1 and leaves v2 empty).
//
// The parent creates the cgroup, writes the limits and opens cgroup.procs before fork; the child's one
// step writes "0" (itself) to each open cgroup.procs, so every process it starts is inside. After the
// run, KillAll ends everything left (v2: cgroup.kill; v1, which has no cgroup.kill: a loop that
// SIGKILLs every member through a pidfd until none is left), Stats tells whether the memory limit
// killed something, and Destroy (or the destructor) removes the directories.
//
// v2 needs the controllers delegated to the runner's own cgroup (its cgroup.subtree_control); when
// they are not, Probe says so and the v1 controllers are tried.
//
// Thread-safety: a Cgroup is used by one thread; Probe is thread-safe. JoinStep is async-signal-safe.
#ifndef SANDBOX_LINUX_CGROUP_H_
#define SANDBOX_LINUX_CGROUP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/linux/child_step.h"
#include "sandbox/unique_fd.h"

namespace sandbox::linux_layers {

enum class CgroupMode { kNone, kV2, kV1 };
const char* CgroupModeName(CgroupMode mode);  // "none", "v2", "v1"

struct CgroupLimits {
  std::optional<uint64_t> memory_bytes = std::nullopt;  // memory.max / memory.limit_in_bytes (+ memsw).
  std::optional<uint64_t> pids = std::nullopt;  // pids.max
  std::optional<uint32_t> cpu_millis = std::nullopt;  // CPU bandwidth: 1000 = one CPU (cpu.max / cfs_quota_us).
};

struct CgroupProbe {
  CgroupMode mode = CgroupMode::kNone;
  std::string detail;  // Where, or why not: "v1 controllers memory,pids,cpu under /sys/fs/cgroup".
};

// Which mode Create would use here, and why.
CgroupProbe ProbeCgroups();

struct CgroupStats {
  uint64_t oom_kills = 0;        // Processes the OOM killer ended inside the cgroup.
  uint64_t memory_failcnt = 0;   // v1: times the memory limit was hit.
  uint64_t pids_max_hits = 0;    // Forks refused by pids.max.
};

class Cgroup;

namespace internal {
// Create's v2 path: a fresh cgroup beneath `parent`, a v2 cgroup the caller may write, with the
// limits written. Create passes the runner's own cgroup once FindV2 has found memory and pids
// delegated there. For tests (a machine with v1 controllers can still have an empty v2 hierarchy,
// where a cgroup without limits works); not for other callers.
absl::StatusOr<std::unique_ptr<Cgroup>> CreateV2At(const std::string& parent,
                                                   const CgroupLimits& limits);
}  // namespace internal

class Cgroup {
 public:
  // Creates "sandbox-<pid>-<n>" beneath the runner's own cgroup (in each v1 controller; a name
  // already taken in any of them, e.g. left by a killed runner of the same pid, is skipped for the
  // next n) and writes the limits. EUNSUPPORTED when neither v2 nor v1 is usable (with the reason), EPERM/EIO otherwise.
  static absl::StatusOr<std::unique_ptr<Cgroup>> Create(const CgroupLimits& limits);
  ~Cgroup();  // Destroy(), errors ignored.
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  CgroupMode mode() const { return mode_; }
  const std::vector<std::string>& dirs() const { return dirs_; }

  // The child's step: join every controller's cgroup. Async-signal-safe.
  LayerStep JoinStep() const;
  // The cgroup.procs fds JoinStep writes to (a process that runs it later must keep them open).
  const std::vector<int>& procs_fds() const { return raw_procs_fds_; }

  // SIGKILLs every process in the cgroup and waits (bounded) until it is empty.
  absl::Status KillAll();
  CgroupStats Stats() const;
  // KillAll, then remove the directories. Idempotent.
  absl::Status Destroy();

  // "cgroup(v1:memory,pids,cpu)"
  std::string Describe() const;

 private:
  friend absl::StatusOr<std::unique_ptr<Cgroup>> internal::CreateV2At(const std::string&,
                                                                      const CgroupLimits&);
  Cgroup() = default;
  static int Join(const void* arg);
  absl::Status OpenProcs();  // Opens each dir's cgroup.procs for JoinStep.

  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> dirs_;        // One (v2) or one per controller (v1).
  std::vector<std::string> controllers_;
  std::vector<UniqueFd> procs_fds_;      // cgroup.procs of each dir, opened for writing.
  std::vector<int> raw_procs_fds_;       // The same fds, for the child.
  bool destroyed_ = false;
};

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_CGROUP_H_
