// The reaper: every descendant of a command is gone when its run ends, double-forked daemons too.
// (On a timeout too: the command runs in a process group of its own, which the runner signals,
// so the waiter survives the group's SIGKILL and sweeps what it adopted; see child_plan.h.)
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
//   runner -> waiter (subreaper, session leader) -> command (own process group) -> ... daemons
//
// With a pid namespace the namespace's init does this job (see namespaces.h) and the kernel kills
// what is left when it exits; this layer is for runs without one. The runner's timeout signals
// (SIGTERM, then SIGKILL after the grace period) go to the command's group, not to the waiter, which
// therefore outlives them and still sweeps the daemons it adopted (before, the group's SIGKILL ended
// the waiter too, and a setsid daemon went to the host's init unless a cgroup caught it). If the
// waiter itself does not exit, the runner SIGKILLs it a bound later; the cgroup layer, when on,
// still kills the cgroup last.
//
// Thread-safety: the step is async-signal-safe; ProbeReaper is thread-safe.
#ifndef SANDBOX_LINUX_REAPER_H_
#define SANDBOX_LINUX_REAPER_H_

#include <sys/types.h>

#include "absl/status/status.h"
#include "sandbox/linux/child_step.h"

namespace sandbox::linux_layers {

// "fork(subreaper waiter)": in the forked child, after the fds are closed. Returns 0 in the command,
// which is put in a process group of its own; the waiter reports it on `*error_fd` (the runner's
// error pipe, known once the plan is built: child_plan.h, stand-ins) so the runner's timeout signals
// reach the command's group and not the waiter, which then sweeps what it adopted. Without it
// (null, or -1) the command stays in the waiter's group.
LayerStep SubreaperStep(const int* error_fd = nullptr);

// Writes the stand-in's {kChildReportProcessGroup, pgid} report to `error_fd`. Async-signal-safe.
void ReportProcessGroup(int error_fd, pid_t pgid);

// The waiter's loop: reaps adopted children until `command` (a child of the caller) exits, then
// kills and reaps every other child, and their orphans as they are adopted, until none is left.
// Returns the command's wait status (or -1), leaving the command unreaped: its pid, the id of its
// process group, stays taken until the caller exits. Async-signal-safe.
int SweepKeepingCommand(pid_t command);

// SIGKILLs every current child of the calling thread through a pidfd (the subreaper's sweep; the
// isolation pool's seed uses it too). Returns how many it found, or -1. Async-signal-safe.
int KillAdoptedChildren();

// OK when PR_SET_CHILD_SUBREAPER, pidfds and /proc/<pid>/task/<tid>/children all work here;
// EUNSUPPORTED naming the missing one otherwise.
absl::Status ProbeReaper();

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_REAPER_H_
