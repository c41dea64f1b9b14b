// The reaper: every descendant of a command is gone when its run ends, double-forked daemons too.
//
// PR_SET_CHILD_SUBREAPER is process-wide: set on the runner itself, every orphan of every run (and of
// anything else the host process starts) would be adopted by the runner, with no way to tell which
// run it came from. So the subreaper is scoped to one run: the runner's direct child forks the
// command and stays behind as a small waiter that is a subreaper. Orphans of the command are adopted
// by the waiter; when the command exits, the waiter SIGKILLs every child it has left, through pidfds
// (never a bare pid: an unreaped child's pid cannot be recycled, and the pidfd pins it anyway), reaps
// them, repeats until it has no child, and ends the way the command ended (same exit code or
// signal), so the runner's result is the command's.
//
//   runner -> waiter (subreaper, process group leader) -> command -> ... daemons (adopted by waiter)
//
// With a pid namespace the namespace's init does this job (see namespaces.h) and the kernel kills
// what is left when it exits; this layer is for runs without one. The waiter ignores SIGTERM so the
// command gets the runner's grace period; a SIGKILL to the group ends the waiter too, and then only
// the cgroup layer (KillAll) still reaches an escaped daemon: the runner kills the cgroup last.
//
// Thread-safety: the step is async-signal-safe; ProbeReaper is thread-safe.
#ifndef SANDBOX_LINUX_REAPER_H_
#define SANDBOX_LINUX_REAPER_H_

#include "absl/status/status.h"
#include "sandbox/linux/child_step.h"

namespace sandbox::linux_layers {

// "fork(subreaper waiter)": in the forked child, after the fds are closed. Returns 0 in the command.
LayerStep SubreaperStep();

// SIGKILLs every current child of the calling thread through a pidfd (the subreaper's sweep; the
// isolation pool's seed uses it too). Returns how many it found, or -1. Async-signal-safe.
int KillAdoptedChildren();

// OK when PR_SET_CHILD_SUBREAPER, pidfds and /proc/<pid>/task/<tid>/children all work here;
// EUNSUPPORTED naming the missing one otherwise.
absl::Status ProbeReaper();

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_REAPER_H_
