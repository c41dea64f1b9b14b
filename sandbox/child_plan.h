// The child's setup between fork and exec, as a flat list of named steps.
//
// The runner builds the plan before fork: every step is a plain function pointer and an argument that
// was prepared in the parent (paths, argv/envp arrays, rlimit values), so the child only reads memory
// and makes system calls. Steps run in phase order, then in the order they were added, which is the
// order the kernel demands (DESIGN.md):
//
//   kStdio    dup2 the pipes onto 0, 1, 2                                   (runner)
//   kSession  setsid, default signal dispositions, empty signal mask        (runner)
//   kIsolate  namespaces, uid/gid maps, mounts, cgroup                      (sandbox/linux layers)
//   kLimits   setrlimit from the table                                      (runner)
//   kFds      close every fd but 0, 1, 2 and the kept ones; chdir           (runner)
//   kConfine  drop capabilities, no_new_privs, Landlock, seccomp (last)     (sandbox/linux layers)
//   kExec     execve                                                        (runner)
//
// A step that fails returns its errno; the child writes {step index, errno} to a close-on-exec pipe
// and _exits, and the parent turns that into "<name> failed: <strerror>" with the step's name.
//
// Stand-ins: a layer whose process stays behind as the runner's direct child while the command runs
// (the subreaper waiter) puts the command in a process group of its own and writes
// {kChildReportProcessGroup, pgid} to the same pipe before the command's exec. The runner then sends
// the timeout's SIGTERM and SIGKILL to that group, not to the stand-in, which outlives the command,
// sweeps what it adopted and exits the way the command did; the stand-in keeps the command a zombie
// until then, so the group id cannot be recycled while the runner may still signal it.
//
// Thread-safety: a ChildPlan is built and sealed by one thread, then only read (by the child).
#ifndef SANDBOX_CHILD_PLAN_H_
#define SANDBOX_CHILD_PLAN_H_

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sandbox {

enum class ChildPhase { kStdio, kSession, kIsolate, kLimits, kFds, kConfine, kExec };

// The step index of a stand-in's report naming the command's process group (see above).
inline constexpr int32_t kChildReportProcessGroup = -1;

// Runs in the child and must be async-signal-safe: no allocation, no locks, no stdio, nothing that may
// take a lock inside libc. On Linux the child is started with vfork and shares the parent's memory, so
// a step also writes no memory but its own stack (it may read what the parent prepared). A step that
// needs the parent to act while the child waits (writing uid_map) calls ChildPlan::RequireFork().
// Returns 0, or the errno of the call that failed.
using ChildStepFn = int (*)(const void* arg);

struct ChildStep {
  ChildPhase phase;
  std::string name;    // The call as written, for the error: "setrlimit(RLIMIT_AS)", "exec".
  std::string detail;  // Appended to the error in parentheses when not empty (e.g. the path).
  ChildStepFn fn;
  const void* arg;     // Owned by whoever added the step; must stay valid until Run returns.
};

// What the runner prepared for a run, as plain data, for a ChildLauncher that starts the command in
// a process it set up ahead of the run (sandbox/linux's isolation pool). Pointers are valid during
// Launch only.
struct LaunchRequest {
  struct Rlimit {
    int resource;
    uint64_t soft;
    uint64_t hard;
  };
  const char* exec_path;
  char* const* argv;  // Null-terminated.
  char* const* envp;  // Null-terminated.
  const char* cwd;
  std::vector<Rlimit> rlimits;
  int stdio[3];  // The child's stdin, stdout, stderr.
  int error_fd;  // Where a failed setup step writes {step index, errno} (the runner's error pipe).
};

// Starts a run's direct child instead of the runner's fork + plan. The child the launcher returns
// must be the leader of a new session and process group (the runner signals the group), a child of
// the calling process (the runner reaps it), and must close `error_fd` exactly when the command's
// exec succeeded, or write {step index, errno} to it first. Thread-safety: one Launch per object.
class ChildLauncher {
 public:
  virtual ~ChildLauncher() = default;
  // Returns the direct child's pid, or -1 with errno set (nothing was started).
  virtual pid_t Launch(const LaunchRequest& request) = 0;
  // The name of setup step `index` as reported on the error pipe ("mount(tmpfs, /tmp)").
  virtual std::string StepName(int index) const = 0;
  // The wait status to report once the direct child was reaped with `raw_status`: the command's own
  // when the direct child stood in for it (a pid-namespace init) and passed it on.
  virtual int CommandStatus(int raw_status) = 0;
};

class ChildPlan {
 public:
  // Adds a step to `phase`, after the steps already in that phase.
  void Add(ChildPhase phase, std::string name, ChildStepFn fn, const void* arg,
           std::string detail = "") {
    steps_.push_back(ChildStep{phase, std::move(name), std::move(detail), fn, arg});
  }

  // Keeps `fd` open through the close-fds step (a layer's own fd, e.g. a Landlock ruleset). The fd
  // must be >= 3 and should be close-on-exec.
  void KeepFd(int fd) { keep_fds_.push_back(fd); }

  // Starts the child with fork instead of vfork: for steps that wait on the parent.
  void RequireFork() { require_fork_ = true; }
  bool require_fork() const { return require_fork_; }

  // The error pipe's write end in the child, for a stand-in's process-group report. Set by the runner
  // before it calls the PlanExtension.
  void SetErrorFd(int fd) { error_fd_ = fd; }
  int error_fd() const { return error_fd_; }

  // Hands the start of the child to `launcher` (owned by the caller; valid until Run returns). The
  // plan's steps are then not run: the launcher does the equivalent setup itself.
  void SetLauncher(ChildLauncher* launcher) { launcher_ = launcher; }
  ChildLauncher* launcher() const { return launcher_; }

  // Names a layer for RunResult::layers_in_force ("landlock", "seccomp", ...).
  void AddLayer(std::string layer) { layers_.push_back(std::move(layer)); }

  // Puts the steps in run order (stable by phase). Called once by the runner, before fork.
  void Seal() {
    std::stable_sort(steps_.begin(), steps_.end(), [](const ChildStep& a, const ChildStep& b) {
      return static_cast<int>(a.phase) < static_cast<int>(b.phase);
    });
  }

  const std::vector<ChildStep>& steps() const { return steps_; }
  const std::vector<int>& keep_fds() const { return keep_fds_; }
  const std::vector<std::string>& layers() const { return layers_; }

 private:
  std::vector<ChildStep> steps_;
  std::vector<int> keep_fds_;
  std::vector<std::string> layers_;
  bool require_fork_ = false;
  ChildLauncher* launcher_ = nullptr;
  int error_fd_ = -1;
};

}  // namespace sandbox

#endif  // SANDBOX_CHILD_PLAN_H_
