#include "sandbox/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "sandbox/errors.h"
#include "sandbox/runner_platform.h"
#include "sandbox/status_macros.h"
#include "sandbox/unique_fd.h"

extern char** environ;

namespace sandbox {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";
// How long the runner keeps draining pipes after the child exited and its group was killed. Only a
// process that left the group (setsid) can still hold them; the Linux layers (cgroup, subreaper)
// catch those, the portable runner stops listening.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(1);
// How long Run waits for SIGKILLed group members to disappear before returning.
constexpr absl::Duration kGroupExitBound = absl::Seconds(2);
// Longest waitid() tick when the platform has no exit notifier.
constexpr absl::Duration kMaxExitTick = absl::Milliseconds(20);
constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kWriteChunk = 64 << 10;
constexpr int kStdioCount = 3;

// ---------------------------------------------------------------------------------------------
// The rlimit table. Every limit is applied in the child with soft and hard equal, except CPU whose
// hard limit is one second above the soft one: at the soft limit the kernel sends SIGXCPU (which a
// program may catch to report), at the hard limit SIGKILL.
struct RlimitSpec {
  const char* name;
  int resource;
  std::optional<uint64_t> Limits::*value;  // nullptr: always 0 (RLIMIT_CORE).
  uint64_t hard_extra;
};

constexpr RlimitSpec kRlimitTable[] = {
    {"RLIMIT_CORE", RLIMIT_CORE, nullptr, 0},
    {"RLIMIT_CPU", RLIMIT_CPU, &Limits::cpu_seconds, 1},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE, &Limits::file_size_bytes, 0},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE, &Limits::open_files, 0},
    {"RLIMIT_AS", RLIMIT_AS, &Limits::address_space_bytes, 0},
    {"RLIMIT_NPROC", RLIMIT_NPROC, &Limits::processes, 0},
};
constexpr size_t kRlimitCount = std::size(kRlimitTable);

// ---------------------------------------------------------------------------------------------
// Everything the child reads, prepared in the parent before fork.
struct StdioStep {
  int from;
  int to;
};

struct RlimitStep {
  int resource;
  struct rlimit value;
};

struct CloseFdsStep {
  std::vector<int> keep;  // Sorted, all >= 3.
  int loop_bound;
};

struct ChildContext {
  std::array<StdioStep, kStdioCount> stdio;
  std::array<RlimitStep, kRlimitCount> rlimits;
  CloseFdsStep close_fds;
  std::string cwd;
  std::string exec_path;
  std::vector<std::string> env_strings;
  std::vector<char*> argv;  // Null-terminated, pointing into the request and env_strings.
  std::vector<char*> envp;
  std::vector<LaunchRequest::Rlimit> launch_rlimits;  // The same limits, for a ChildLauncher.
};

// What a failed child step writes to the error pipe. 8 bytes: one atomic pipe write.
struct ChildReport {
  int32_t step;
  int32_t err;
};

// ---------------------------------------------------------------------------------------------
// Child steps. Everything from here to the end of RunChildSteps runs between fork (or vfork) and exec,
// in a copy of a possibly multi-threaded process: only async-signal-safe calls (dup2, setsid,
// sigaction, sigprocmask, setrlimit, close, chdir, execve, write, _exit), no allocation, no locks, no
// stdio. The steps only read memory the parent prepared, write only to their own stack and to fds,
// and never return past RunChildSteps, so they are also correct under vfork (shared memory).

int DupStdio(const void* arg) {
  const auto* step = static_cast<const StdioStep*>(arg);
  while (dup2(step->from, step->to) == -1) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

int StartSession(const void*) { return setsid() == -1 ? errno : 0; }

// The parent blocked every signal around fork and may have handlers or SIG_IGN (SIGPIPE is often
// ignored by servers; some launchers ignore the real-time signals glibc reserves) that exec would
// carry over: give the program default dispositions and an empty mask, as a fresh process from a
// shell would have.
int ResetSignals(const void*) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    platform::SetDefaultDisposition(sig);  // Also the ones libc reserves, where the platform can.
  }
  sigset_t none;
  sigemptyset(&none);
  return sigprocmask(SIG_SETMASK, &none, nullptr) == -1 ? errno : 0;
}

int SetRlimit(const void* arg) {
  const auto* step = static_cast<const RlimitStep*>(arg);
  return setrlimit(step->resource, &step->value) == -1 ? errno : 0;
}

// Closes every fd >= 3 except the kept ones (the error pipe and layer fds), range by range.
int CloseFds(const void* arg) {
  const auto* step = static_cast<const CloseFdsStep*>(arg);
  int first = kStdioCount;
  for (const int keep : step->keep) {
    if (keep > first) {
      if (const int err = platform::CloseFdRange(first, keep - 1, step->loop_bound); err != 0) {
        return err;
      }
    }
    first = keep + 1;
  }
  return platform::CloseFdRange(first, INT_MAX, step->loop_bound);
}

int ChangeDir(const void* arg) {
  return chdir(static_cast<const ChildContext*>(arg)->cwd.c_str()) == -1 ? errno : 0;
}

int Exec(const void* arg) {
  const auto* context = static_cast<const ChildContext*>(arg);
  execve(context->exec_path.c_str(), context->argv.data(), context->envp.data());
  return errno != 0 ? errno : ENOEXEC;  // execve returns only on failure.
}

[[noreturn]] void ReportAndExit(int error_fd, size_t step, int err) {
  const ChildReport report{static_cast<int32_t>(step), static_cast<int32_t>(err)};
  while (write(error_fd, &report, sizeof(report)) == -1 && errno == EINTR) {
  }
  _exit(127);
}

}  // namespace

namespace platform {

[[noreturn]] void RunChildSteps(const std::vector<ChildStep>& steps, int error_fd) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const int err = steps[i].fn(steps[i].arg);
    if (err != 0) ReportAndExit(error_fd, i, err);
  }
  ReportAndExit(error_fd, steps.size() - 1, ENOEXEC);  // The last step is exec; it cannot succeed
                                                       // and return.
}

}  // namespace platform
// End of the code that runs between fork and exec.

namespace {
// ---------------------------------------------------------------------------------------------

bool HasNul(absl::string_view s) { return s.find('\0') != absl::string_view::npos; }

absl::Status ValidateRequest(const RunRequest& request) {
  if (request.argv.empty()) return MakeError(ErrorCode::kEINVAL, "argv is empty");
  if (request.argv[0].empty()) return MakeError(ErrorCode::kEINVAL, "argv[0] is empty");
  for (size_t i = 0; i < request.argv.size(); ++i) {
    if (HasNul(request.argv[i])) {
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("argv[", i, "] contains a NUL byte"));
    }
  }
  if (request.cwd.empty() || request.cwd[0] != '/') {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("cwd must be an absolute path, got '", request.cwd, "'"));
  }
  if (HasNul(request.cwd)) return MakeError(ErrorCode::kEINVAL, "cwd contains a NUL byte");
  struct stat st;
  if (stat(request.cwd.c_str(), &st) == -1) {
    return ErrnoError(errno, absl::StrCat("cwd '", request.cwd, "'"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("cwd '", request.cwd, "' is not a directory"));
  }
  if (request.env.has_value()) {
    for (const auto& [key, value] : *request.env) {
      if (key.empty() || key.find('=') != std::string::npos || HasNul(key) || HasNul(value)) {
        return MakeError(ErrorCode::kEINVAL,
                         absl::StrCat("bad environment variable name '", key,
                                      "' (empty, or contains '=' or NUL) or NUL in its value"));
      }
    }
  }
  if (request.wall_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kEINVAL, "wall_timeout must be positive");
  }
  if (request.kill_grace < absl::ZeroDuration()) {
    return MakeError(ErrorCode::kEINVAL, "kill_grace must not be negative");
  }
  if (request.limits.cpu_seconds.has_value() && *request.limits.cpu_seconds == 0) {
    return MakeError(ErrorCode::kEINVAL, "cpu_seconds must be at least 1");
  }
  return absl::OkStatus();
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// execvp's search, done before fork on the child's PATH (not ours). A name with '/' is used as is
// (relative to the child's cwd, as execve will see it after chdir).
absl::StatusOr<std::string> ResolveExecutable(const std::string& name,
                                              const std::map<std::string, std::string>& env,
                                              const std::string& cwd) {
  if (name.find('/') != std::string::npos) return name;
  const auto path = env.find("PATH");
  if (path == env.end()) {
    return MakeError(ErrorCode::kENOENT,
                     absl::StrCat("exec failed: No such file or directory ('", name,
                                  "' has no '/' and the environment has no PATH)"));
  }
  for (absl::string_view dir : absl::StrSplit(path->second, ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (candidate[0] != '/') candidate = absl::StrCat(cwd, "/", candidate);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return MakeError(ErrorCode::kENOENT,
                   absl::StrCat("exec failed: No such file or directory ('", name,
                                "' not found on PATH=", path->second, ")"));
}

std::string FormatRlimit(const RlimitSpec& spec, const struct rlimit& value) {
  return absl::StrCat(spec.name, "=", value.rlim_cur, ":", value.rlim_max);
}

// The parent's pipes to the child: stdin (or /dev/null), stdout, stderr, and the error pipe.
struct Pipes {
  UniqueFd stdin_child, stdin_parent;
  UniqueFd stdout_child, stdout_parent;
  UniqueFd stderr_child, stderr_parent;
  UniqueFd error_read, error_write;
};

absl::Status OpenPipes(const RunRequest& request, Pipes& pipes) {
  if (request.stdin_data.has_value()) {
    SB_RETURN_IF_ERROR(platform::MakePipe(pipes.stdin_child, pipes.stdin_parent));
  } else {
    const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd == -1) return ErrnoError(errno, "open(/dev/null)");
    pipes.stdin_child.reset(fd);
    if (fd < kStdioCount) {
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, kStdioCount);
      if (moved == -1) return ErrnoError(errno, "fcntl(F_DUPFD_CLOEXEC)");
      pipes.stdin_child.reset(moved);
    }
  }
  SB_RETURN_IF_ERROR(platform::MakePipe(pipes.stdout_parent, pipes.stdout_child));
  SB_RETURN_IF_ERROR(platform::MakePipe(pipes.stderr_parent, pipes.stderr_child));
  SB_RETURN_IF_ERROR(platform::MakePipe(pipes.error_read, pipes.error_write));
  return absl::OkStatus();
}

int CloseLoopBound() {
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
      nofile.rlim_cur < static_cast<rlim_t>(INT_MAX)) {
    return static_cast<int>(nofile.rlim_cur);
  }
  const long open_max = sysconf(_SC_OPEN_MAX);
  return open_max > 0 && open_max < INT_MAX ? static_cast<int>(open_max) : 65536;
}

// Fills the context and adds the runner's own steps to the plan, in the order of child_plan.h.
void BuildPlan(const RunRequest& request, const std::map<std::string, std::string>& env,
               std::string exec_path, const Pipes& pipes, ChildContext& context, ChildPlan& plan,
               RunResult& result) {
  context.stdio = {StdioStep{pipes.stdin_child.get(), STDIN_FILENO},
                   StdioStep{pipes.stdout_child.get(), STDOUT_FILENO},
                   StdioStep{pipes.stderr_child.get(), STDERR_FILENO}};
  context.cwd = request.cwd;
  context.exec_path = std::move(exec_path);
  for (const auto& [key, value] : env) context.env_strings.push_back(absl::StrCat(key, "=", value));
  for (const std::string& arg : request.argv) context.argv.push_back(const_cast<char*>(arg.c_str()));
  context.argv.push_back(nullptr);
  for (std::string& entry : context.env_strings) context.envp.push_back(entry.data());
  context.envp.push_back(nullptr);

  plan.Add(ChildPhase::kStdio, "dup2(stdin)", DupStdio, &context.stdio[0]);
  plan.Add(ChildPhase::kStdio, "dup2(stdout)", DupStdio, &context.stdio[1]);
  plan.Add(ChildPhase::kStdio, "dup2(stderr)", DupStdio, &context.stdio[2]);
  plan.Add(ChildPhase::kSession, "setsid", StartSession, nullptr);
  plan.Add(ChildPhase::kSession, "reset_signals", ResetSignals, nullptr);
  for (size_t i = 0; i < kRlimitCount; ++i) {
    const RlimitSpec& spec = kRlimitTable[i];
    std::optional<uint64_t> soft = spec.value == nullptr ? std::optional<uint64_t>(0)
                                                         : request.limits.*spec.value;
    if (!soft.has_value()) continue;
    const rlim_t cur = static_cast<rlim_t>(*soft);
    context.rlimits[i] = RlimitStep{spec.resource, {cur, cur + spec.hard_extra}};
    context.launch_rlimits.push_back({spec.resource, cur, cur + spec.hard_extra});
    plan.Add(ChildPhase::kLimits, absl::StrCat("setrlimit(", spec.name, ")"), SetRlimit,
             &context.rlimits[i]);
    result.limits_in_force.push_back(FormatRlimit(spec, context.rlimits[i].value));
  }
  plan.Add(ChildPhase::kFds, "close_fds", CloseFds, &context.close_fds,
           platform::CloseFdsMechanism());
  plan.Add(ChildPhase::kFds, "chdir", ChangeDir, &context, context.cwd);
  plan.Add(ChildPhase::kExec, "exec", Exec, &context, context.exec_path);
  result.layers_in_force = {"session", "process_group", "rlimits", "close_fds"};
}

// Blocks every signal in the calling thread for the lifetime of the object (around fork, so that no
// handler of the parent runs in the child before ResetSignals).
class ScopedBlockAllSignals {
 public:
  ScopedBlockAllSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved_);
  }
  ~ScopedBlockAllSignals() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  ScopedBlockAllSignals(const ScopedBlockAllSignals&) = delete;
  ScopedBlockAllSignals& operator=(const ScopedBlockAllSignals&) = delete;

 private:
  sigset_t saved_;
};

// Reads the child's report: EOF means exec succeeded (the pipe is close-on-exec). A stand-in's
// process-group report (child_plan.h) comes first and sets `pgid`.
absl::StatusOr<std::optional<ChildReport>> ReadChildReport(int fd, pid_t& pgid) {
  ChildReport report;
  size_t got = 0;
  while (got < sizeof(report)) {
    const ssize_t n = read(fd, reinterpret_cast<char*>(&report) + got, sizeof(report) - got);
    if (n == 0) break;
    if (n == -1) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read(error pipe)");
    }
    got += static_cast<size_t>(n);
    if (got == sizeof(report) && report.step == kChildReportProcessGroup) {
      if (report.err <= 0) return MakeError(ErrorCode::kEINTERNAL, "a bad process group from the child's stand-in");
      pgid = static_cast<pid_t>(report.err);
      got = 0;
    }
  }
  if (got == 0) return std::optional<ChildReport>();
  if (got != sizeof(report)) {
    return MakeError(ErrorCode::kEINTERNAL, "short report from the child's error pipe");
  }
  return std::optional<ChildReport>(report);
}

absl::Status ChildStepError(const ChildPlan& plan, const ChildReport& report) {
  if (plan.launcher() != nullptr) {
    return MakeError(ErrnoToCode(report.err), absl::StrCat(plan.launcher()->StepName(report.step),
                                                          " failed: ", std::strerror(report.err)));
  }
  if (report.step < 0 || static_cast<size_t>(report.step) >= plan.steps().size()) {
    return MakeError(ErrorCode::kEINTERNAL, "the child reported an unknown setup step");
  }
  const ChildStep& step = plan.steps()[static_cast<size_t>(report.step)];
  std::string message = absl::StrCat(step.name, " failed: ", std::strerror(report.err));
  if (!step.detail.empty()) absl::StrAppend(&message, " (", step.detail, ")");
  return MakeError(ErrnoToCode(report.err), message);
}

pid_t WaitReap(pid_t pid, int* status, struct rusage* usage) {
  pid_t r;
  do {
    r = wait4(pid, status, 0, usage);
  } while (r == -1 && errno == EINTR);
  return r;
}

// Appends to a capture up to its cap and counts everything. The string's capacity never exceeds the
// cap, so memory stays at cap + one read chunk however much the child writes (plus, for the moment of
// a reallocation, the old buffer).
class CappedSink {
 public:
  CappedSink(StreamCapture* capture, uint64_t cap) : capture_(capture), cap_(cap) {}

  void Append(const char* data, size_t size) {
    capture_->total_bytes += size;
    std::string& kept = capture_->data;
    const uint64_t room = cap_ - std::min<uint64_t>(cap_, kept.size());
    const size_t take = static_cast<size_t>(std::min<uint64_t>(room, size));
    if (take < size) capture_->truncated = true;
    if (take == 0) return;
    const size_t needed = kept.size() + take;
    if (needed > kept.capacity()) Grow(needed);
    kept.append(data, take);
  }

 private:
  // Doubles the capacity, but never past the cap. The last step builds a fresh string of exactly the
  // cap: libstdc++'s reserve() rounds a growth below 2x up to 2x, which would overshoot the cap.
  void Grow(size_t needed) {
    std::string& kept = capture_->data;
    const size_t target =
        static_cast<size_t>(std::min<uint64_t>(cap_, std::max(needed, 2 * kept.capacity())));
    if (target < cap_) {
      kept.reserve(target);
      return;
    }
    std::string exact;
    exact.reserve(target);
    exact.append(kept);
    kept.swap(exact);
  }

  StreamCapture* capture_;
  uint64_t cap_;
};

// Writes to the child's stdin without letting SIGPIPE kill the host when the child has exited: the
// signal is blocked in this thread for the write and, if the write raised it, consumed with sigwait.
// (POSIX leaves it open whether an ignored blocked signal stays pending, hence the sigpending check.)
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, saved, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &saved);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const ssize_t written = write(fd, data, size);
  const int saved_errno = errno;
  if (written == -1 && saved_errno == EPIPE && !was_pending) {
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      int sig;
      sigwait(&pipe_set, &sig);
    }
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  errno = saved_errno;
  return written;
}

int PollTimeoutMs(absl::Duration remaining) {
  if (remaining <= absl::ZeroDuration()) return 0;
  const int64_t us = absl::ToInt64Microseconds(remaining);
  return static_cast<int>(std::min<int64_t>((us + 999) / 1000, INT_MAX));
}

// Watches one started child: moves bytes between the pipes and the captures, enforces the wall
// timeout on the group, notices the exit, kills what is left of the group, reaps.
class Supervisor {
 public:
  Supervisor(const RunRequest& request, pid_t pid, pid_t pgid, absl::Time start, Pipes& pipes,
             RunResult& result, ChildLauncher* launcher)
      : request_(request),
        launcher_(launcher),
        pid_(pid),
        pgid_(pgid),
        start_(start),
        deadline_(start + request.wall_timeout),
        stdin_(std::move(pipes.stdin_parent)),
        stdout_(std::move(pipes.stdout_parent)),
        stderr_(std::move(pipes.stderr_parent)),
        exit_fd_(platform::OpenExitNotifier(pid)),
        out_(&result.out, request.stdout_cap),
        err_(&result.err, request.stderr_cap),
        result_(result),
        buffer_(new char[kReadChunk]) {
    // With an exit fd, keep our copies of the output pipes' write ends until the child has exited:
    // the child's exit then wakes poll once (on the exit fd) instead of up to three times (two
    // hang-ups and the exit), each a sleep and a wakeup on a busy machine. Without one, the hang-ups
    // are the earliest sign of the exit, so let them come.
    if (exit_fd_.valid()) {
      hold_stdout_ = std::move(pipes.stdout_child);
      hold_stderr_ = std::move(pipes.stderr_child);
    } else {
      pipes.stdout_child.reset();
      pipes.stderr_child.reset();
    }
  }

  absl::Status Supervise() {
    SB_RETURN_IF_ERROR(SetNonBlocking());
    if (stdin_.valid() && request_.stdin_data->empty()) stdin_.reset();
    while (true) {
      const absl::Time now = absl::Now();
      if (!exited_) {
        SB_ASSIGN_OR_RETURN(const bool exited, HasExited());
        if (exited) {
          SB_RETURN_IF_ERROR(OnExit());
          continue;
        }
        EnforceDeadline(now);
      } else if ((!stdout_.valid() && !stderr_.valid()) || now >= drain_deadline_) {
        break;
      }
      SB_RETURN_IF_ERROR(PollOnce(now));
    }
    stdout_.reset();
    stderr_.reset();
    if (!StandIn()) WaitForGroupExit();  // A stand-in swept its group before it exited.
    return absl::OkStatus();
  }

  // After a failed Supervise: leave nothing of the group behind.
  void Abort() {
    if (exited_) return;
    KillGroup(SIGKILL);
    if (StandIn()) kill(pid_, SIGKILL);  // Unreaped: the pid is still the stand-in's.
    int status;
    WaitReap(pid_, &status, nullptr);
  }

 private:
  absl::Status SetNonBlocking() {
    for (UniqueFd* fd : {&stdin_, &stdout_, &stderr_}) {
      if (!fd->valid()) continue;
      const int flags = fcntl(fd->get(), F_GETFL);
      if (flags == -1 || fcntl(fd->get(), F_SETFL, flags | O_NONBLOCK) == -1) {
        return ErrnoError(errno, "fcntl(O_NONBLOCK)");
      }
    }
    return absl::OkStatus();
  }

  // waitid with WNOWAIT: the child stays a zombie, so its pid (= the group id) cannot be reused
  // while we still signal the group.
  absl::StatusOr<bool> HasExited() {
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    int r;
    do {
      r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (r == -1 && errno == EINTR);
    if (r == -1) {
      return MakeError(ErrorCode::kEINTERNAL,
                       absl::StrCat("waitid(", pid_, "): ", std::strerror(errno),
                                    " (is SIGCHLD ignored in this process?)"));
    }
    return info.si_pid == pid_;
  }

  void KillGroup(int sig) { kill(-pgid_, sig); }  // ESRCH: the group is already empty.

  // The direct child stands in for the command, whose group is its own (child_plan.h).
  bool StandIn() const { return pgid_ != pid_; }

  void EnforceDeadline(absl::Time now) {
    const bool cancelled = request_.cancel != nullptr && request_.cancel->load();
    if (!term_sent_ && (now >= deadline_ || cancelled)) {
      (now >= deadline_ ? result_.timed_out : result_.cancelled) = true;
      term_sent_ = true;
      kill_at_ = now + request_.kill_grace;
      if (request_.kill_grace > absl::ZeroDuration()) KillGroup(SIGTERM);
    }
    if (term_sent_ && !kill_sent_ && now >= kill_at_) {
      kill_sent_ = true;
      KillGroup(SIGKILL);
    }
    // A stand-in exits once the command's group is dead and its sweep is done; if it does not
    // (it was stopped, or is stuck), it is killed too: the run ends either way.
    if (kill_sent_ && StandIn() && !stand_in_killed_ && now >= kill_at_ + kGroupExitBound) {
      stand_in_killed_ = true;
      kill(pid_, SIGKILL);  // Unreaped: the pid is still the stand-in's.
    }
  }

  // The direct child is a zombie: kill whatever is left of its group while the group id is still
  // ours, then reap with rusage. Background children do not outlive the run. (A stand-in has swept
  // the command's group, whose id may be free by now: it is not signalled again.)
  absl::Status OnExit() {
    if (!StandIn()) KillGroup(SIGKILL);
    int status = 0;
    struct rusage usage;
    std::memset(&usage, 0, sizeof(usage));
    if (WaitReap(pid_, &status, &usage) == -1) return ErrnoError(errno, "wait4");
    exited_ = true;
    if (launcher_ != nullptr) status = launcher_->CommandStatus(status);
    const absl::Time now = absl::Now();
    drain_deadline_ = now + kDrainAfterExit;
    exit_fd_.reset();
    hold_stdout_.reset();  // Now EOF comes once the last member of the group has died.
    hold_stderr_.reset();
    stdin_.reset();  // Nobody is left to read it.
    result_.wall_time = now - start_;
    result_.user_cpu = absl::DurationFromTimeval(usage.ru_utime);
    result_.system_cpu = absl::DurationFromTimeval(usage.ru_stime);
    result_.peak_rss_kb = platform::MaxRssKb(usage);
    if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result_.term_signal = WTERMSIG(status);
    return absl::OkStatus();
  }

  absl::Time NextWakeup(absl::Time now) {
    if (exited_) return drain_deadline_;
    absl::Time next = !term_sent_ ? deadline_ : (!kill_sent_ ? kill_at_ : absl::InfiniteFuture());
    if (kill_sent_ && StandIn() && !stand_in_killed_) next = kill_at_ + kGroupExitBound;
    if (request_.cancel != nullptr && !term_sent_) next = std::min(next, now + kCancelCheck);
    if (!exit_fd_.valid()) {
      next = std::min(next, now + tick_);
      tick_ = std::min(tick_ * 2, kMaxExitTick);
    }
    return next;
  }

  absl::Status PollOnce(absl::Time now) {
    struct pollfd fds[4];
    nfds_t count = 0;
    auto add = [&](const UniqueFd& fd, short events) {
      if (fd.valid()) fds[count++] = {fd.get(), events, 0};
    };
    add(stdin_, POLLOUT);
    add(stdout_, POLLIN);
    add(stderr_, POLLIN);
    add(exit_fd_, POLLIN);
    const absl::Time next = NextWakeup(now);
    const int timeout = next == absl::InfiniteFuture() ? -1 : PollTimeoutMs(next - now);
    const int ready = poll(fds, count, timeout);
    if (ready == -1) {
      if (errno == EINTR) return absl::OkStatus();
      return ErrnoError(errno, "poll");
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == stdin_.get()) WriteStdin();
      else if (fds[i].fd == stdout_.get()) Drain(stdout_, out_);
      else if (fds[i].fd == stderr_.get()) Drain(stderr_, err_);
    }
    return absl::OkStatus();
  }

  void WriteStdin() {
    const std::string& data = *request_.stdin_data;
    while (stdin_offset_ < data.size()) {
      const size_t size = std::min(kWriteChunk, data.size() - stdin_offset_);
      const ssize_t n = WriteNoSigpipe(stdin_.get(), data.data() + stdin_offset_, size);
      if (n > 0) {
        stdin_offset_ += static_cast<size_t>(n);
        continue;
      }
      if (n == -1 && errno == EINTR) continue;
      if (n == -1 && errno == EAGAIN) return;
      stdin_.reset();  // EPIPE: the reader is gone; the rest of the input is not wanted.
      return;
    }
    stdin_.reset();  // All written: EOF for the child.
  }

  // Reads what is there now (a bounded number of chunks, so one busy stream cannot starve the
  // others or the deadline check).
  void Drain(UniqueFd& fd, CappedSink& sink) {
    for (int round = 0; round < 16; ++round) {
      const ssize_t n = read(fd.get(), buffer_.get(), kReadChunk);
      if (n > 0) {
        sink.Append(buffer_.get(), static_cast<size_t>(n));
        continue;
      }
      if (n == -1 && errno == EINTR) continue;
      if (n == -1 && errno == EAGAIN) return;
      fd.reset();  // EOF (or a read error: nothing more will come).
      return;
    }
  }

  // Members of the group were SIGKILLed; wait (bounded) until the kernel has removed them, so that
  // the caller never sees a survivor. kill(-pgid, 0) fails with ESRCH once the group is empty.
  void WaitForGroupExit() {
    const absl::Time give_up = absl::Now() + kGroupExitBound;
    while (kill(-pgid_, 0) == 0 && absl::Now() < give_up) {
      poll(nullptr, 0, 1);
    }
  }

  const RunRequest& request_;
  ChildLauncher* const launcher_;
  const pid_t pid_;
  const pid_t pgid_;  // pid_, or the command's own group under a stand-in.
  const absl::Time start_;
  const absl::Time deadline_;
  UniqueFd stdin_, stdout_, stderr_, exit_fd_;
  UniqueFd hold_stdout_, hold_stderr_;  // Our copies of the child's write ends (see constructor).
  CappedSink out_, err_;
  RunResult& result_;
  std::unique_ptr<char[]> buffer_;
  size_t stdin_offset_ = 0;
  bool exited_ = false;
  bool term_sent_ = false;
  bool kill_sent_ = false;
  bool stand_in_killed_ = false;
  absl::Time kill_at_;
  absl::Time drain_deadline_;
  absl::Duration tick_ = absl::Milliseconds(1);
};

}  // namespace

std::map<std::string, std::string> DefaultEnvironment(const std::string& cwd) {
  return {{"PATH", kDefaultPath}, {"HOME", cwd}, {"LANG", "C.UTF-8"}};
}

std::map<std::string, std::string> ParentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const absl::string_view text(*entry);
    const size_t eq = text.find('=');
    if (eq == absl::string_view::npos || eq == 0) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

absl::StatusOr<RunResult> Run(const RunRequest& request) { return Run(request, PlanExtension()); }

absl::StatusOr<RunResult> Run(const RunRequest& request, const PlanExtension& extend) {
  SB_RETURN_IF_ERROR(ValidateRequest(request));
  const std::map<std::string, std::string> env =
      request.env.has_value() ? *request.env : DefaultEnvironment(request.cwd);
  SB_ASSIGN_OR_RETURN(std::string exec_path, ResolveExecutable(request.argv[0], env, request.cwd));

  Pipes pipes;
  SB_RETURN_IF_ERROR(OpenPipes(request, pipes));
  RunResult result;
  ChildContext context;
  ChildPlan plan;
  BuildPlan(request, env, std::move(exec_path), pipes, context, plan, result);
  plan.SetErrorFd(pipes.error_write.get());
  if (extend) SB_RETURN_IF_ERROR(extend(request, plan));
  for (const int fd : plan.keep_fds()) {
    if (fd < kStdioCount) {
      return MakeError(ErrorCode::kEINTERNAL, absl::StrCat("a layer asked to keep fd ", fd,
                                                          "; only fds >= 3 can be kept"));
    }
  }
  context.close_fds.keep = plan.keep_fds();
  context.close_fds.keep.push_back(pipes.error_write.get());
  std::sort(context.close_fds.keep.begin(), context.close_fds.keep.end());
  context.close_fds.loop_bound = CloseLoopBound();
  plan.Seal();
  for (const std::string& layer : plan.layers()) result.layers_in_force.push_back(layer);

  const absl::Time start = absl::Now();
  pid_t pid;
  if (ChildLauncher* launcher = plan.launcher(); launcher != nullptr) {
    LaunchRequest launch{context.exec_path.c_str(),
                         context.argv.data(),
                         context.envp.data(),
                         context.cwd.c_str(),
                         context.launch_rlimits,
                         {pipes.stdin_child.get(), pipes.stdout_child.get(), pipes.stderr_child.get()},
                         pipes.error_write.get()};
    pid = launcher->Launch(launch);
    if (pid == -1) return ErrnoError(errno, "launch(prepared child)");
  } else {
    ScopedBlockAllSignals blocked;
    pid = platform::StartChild(plan.steps(), pipes.error_write.get(), plan.require_fork());
    if (pid == -1) return ErrnoError(errno, plan.require_fork() ? "fork()" : "vfork()");
  }

  // The child's ends belong to the child now; keeping the error pipe's write end would hide EOF.
  // (The Supervisor decides about the output pipes' write ends.)
  pipes.stdin_child.reset();
  pipes.error_write.reset();

  pid_t pgid = pid;  // setsid made the child the leader of a new session and process group.
  absl::StatusOr<std::optional<ChildReport>> report = ReadChildReport(pipes.error_read.get(), pgid);
  if (!report.ok() || report->has_value()) {
    int status;
    kill(pid, SIGKILL);  // Only needed if the report was unreadable; the child _exits otherwise.
    WaitReap(pid, &status, nullptr);
    if (!report.ok()) return report.status();
    return ChildStepError(plan, **report);
  }

  result.pid = pid;
  result.pgid = pgid;
  Supervisor supervisor(request, pid, pgid, start, pipes, result, plan.launcher());
  absl::Status supervised = supervisor.Supervise();
  if (!supervised.ok()) {
    supervisor.Abort();
    return supervised;
  }
  return result;
}

}  // namespace sandbox
