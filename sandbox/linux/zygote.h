// A prepared child ("seed"): a process started ahead of a run that already sits in the run's fresh
// namespaces and cgroup, and waits to be handed the run's command.
//
// Creating namespaces and joining a cgroup are the slow part of an isolated spawn (a cgroup v1
// migration waits for an RCU grace period, 12-18 ms here, unless the hierarchy has favordynmods; a
// net namespace costs ~1 ms to create). None of it depends on the command, so the isolation pool
// (isolation.h, IsolationPool) starts the seed for the next run while the current one runs, and a
// run only pays for what depends on it:
//
//   background (StartSeed):   clone(CLONE_NEW{USER,NS,PID,NET,IPC,UTS}) -> close inherited fds
//     -> signals -> setsid -> uid/gid map -> mounts (/ ro, workspace rw, private /tmp) -> hostname
//     -> cgroup join -> /proc of the new pid namespace -> report ready on the control socket
//   hand-off (SeedLauncher::Launch): the request (argv, env, cwd, rlimits; stdio and error pipe by
//     SCM_RIGHTS) -> dup2 stdio -> rlimits -> fork the command
//   the command: default signals -> close fds -> chdir -> caps, no_new_privs, Landlock, seccomp -> exec
//
// Every seed serves exactly one run and is never reused: it is created with its own namespaces and
// its own cgroup, so nothing of one run (a /tmp file, a process, a SysV segment, a socket, a
// hostname) can reach another. The seed is pid 1 of the run's pid namespace (tree kInit): when the
// command exits it sends the command's wait status on the control socket and exits, and the kernel
// kills whatever else is left in the namespace. (A pid-namespace init cannot die by a signal it
// sends itself, so it passes the status on instead of mirroring it; SeedLauncher::CommandStatus
// gives it to the runner.) Without a pid namespace the seed is a per-run subreaper waiter
// (kSubreaper, see reaper.h), or, with neither layer, execs the command itself (kDirect).
//
// Thread-safety: StartSeed is thread-safe; a Seed is used by one thread at a time. The seed's code
// (everything after clone) is async-signal-safe: it runs in a copy of a multithreaded process.
#ifndef SANDBOX_LINUX_ZYGOTE_H_
#define SANDBOX_LINUX_ZYGOTE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/child_plan.h"
#include "sandbox/linux/child_step.h"
#include "sandbox/unique_fd.h"

namespace sandbox::linux_layers {

enum class SeedTree { kDirect, kInit, kSubreaper };

// What a seed does; every step's argument is prepared in the parent and must outlive the seed's
// start (the seed works on its own copy of the parent's memory, taken at clone).
struct SeedPlan {
  int clone_flags = 0;               // CLONE_NEW* flags; 0 for a plain fork.
  std::vector<LayerStep> prepare;    // In the seed, before it reports ready.
  SeedTree tree = SeedTree::kDirect;
  std::vector<LayerStep> confine;    // In the command, after close-fds and chdir, before exec.
  std::vector<int> keep_fds;         // Open in the seed through its first close (cgroup.procs fds).
};

// A started seed. Destroying an unused seed closes its control socket (it exits) and reaps it.
class Seed {
 public:
  ~Seed();
  Seed(const Seed&) = delete;
  Seed& operator=(const Seed&) = delete;

  pid_t pid() const { return pid_; }
  // Blocks until the seed reports ready (OK) or a failed prepare step ("<step> failed: ...").
  absl::Status WaitReady();
  // The launcher for the one run this seed serves.
  ChildLauncher* launcher();

 private:
  friend absl::StatusOr<std::unique_ptr<Seed>> StartSeed(const SeedPlan& plan);
  class Launcher;
  Seed() = default;

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd control_;
  std::vector<std::string> step_names_;  // Indexed like the seed's error reports.
  bool ready_checked_ = false;
  absl::Status ready_ = absl::OkStatus();
  bool launched_ = false;
  std::unique_ptr<Launcher> launcher_;
};

// Clones the seed and returns at once; the seed prepares itself concurrently (WaitReady).
absl::StatusOr<std::unique_ptr<Seed>> StartSeed(const SeedPlan& plan);

// The largest request (argv + env + cwd + path, with separators) a seed accepts.
inline constexpr size_t kSeedRequestBytes = 1 << 20;
inline constexpr size_t kSeedRequestStrings = 16384;

// Whether a request of `bytes` (all strings with their NULs) in `strings` strings fits a seed (see the
// limits above); a larger one takes the per-run path.
bool FitsSeed(size_t bytes, size_t strings);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_ZYGOTE_H_
