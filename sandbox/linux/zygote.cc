#include "sandbox/linux/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/linux/reaper.h"
#include "sandbox/linux/system_headers.h"

namespace sandbox::linux_layers {
namespace {

constexpr uint32_t kMagic = 0x5eed0001;
constexpr int kPPidfd = 3;  // waitid's P_PIDFD (Linux 5.4); glibc's idtype_t may not name it.
constexpr size_t kMaxRlimits = 8;
constexpr size_t kMaxKeep = 16;
constexpr size_t kMaxSteps = 64;

// What the seed reports on its control socket (8 bytes, one atomic write).
struct Report {
  int32_t step;  // kReady, kCommandStatus, or the index of the step that failed.
  int32_t value;  // errno of the failed step, or the command's wait status.
};
constexpr int32_t kReady = -1;
constexpr int32_t kCommandStatus = -2;

// The request header; the body (exec path, cwd, argv..., envp..., each NUL-terminated) follows.
struct Header {
  uint32_t magic;
  uint32_t argc;
  uint32_t envc;
  uint32_t rlimit_count;
  uint64_t body_bytes;
  LaunchRequest::Rlimit rlimits[kMaxRlimits];
};

// The seed's fixed steps, by index in its reports; the plan's prepare and confine steps follow.
enum FixedStep : int32_t {
  kCloseInherited,
  kSignals,
  kSetsid,
  kReceive,
  kDupStdio,
  kSetRlimit,
  kForkCommand,
  kCloseFds,
  kChdir,
  kExec,
  kSubreaperStep,
  kFixedCount,
};
constexpr const char* kFixedNames[kFixedCount] = {
    "close_range(inherited fds)", "sigaction(seed signals)", "setsid",     "recvmsg(seed request)",
    "dup2(stdio)",                "setrlimit",              "fork(command)", "close_fds",
    "chdir",                      "exec",                   "prctl(PR_SET_CHILD_SUBREAPER)",
};

// Everything the seed reads, as plain arrays: prepared in the parent before clone.
struct SeedArgs {
  int control_fd;
  int keep[kMaxKeep];  // Sorted; control_fd among them.
  size_t keep_count;
  LayerStep prepare[kMaxSteps];
  size_t prepare_count;
  LayerStep confine[kMaxSteps];
  size_t confine_count;
  SeedTree tree;
  char* buffer;   // kSeedRequestBytes: the seed's private copy of a mapping the parent never writes.
  char** strings;  // kSeedRequestStrings + 2 pointers.
};

// The request buffers, mapped once; the parent never touches them, so each seed's copy is its own.
struct Buffers {
  char* bytes;
  char** strings;
};
const Buffers* SharedBuffers() {
  static const Buffers* buffers = [] {
    auto* b = new Buffers{nullptr, nullptr};
    void* bytes = mmap(nullptr, kSeedRequestBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* strings = mmap(nullptr, (kSeedRequestStrings + 2) * sizeof(char*), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bytes != MAP_FAILED && strings != MAP_FAILED) {
      b->bytes = static_cast<char*>(bytes);
      b->strings = static_cast<char**>(strings);
    }
    return b;
  }();
  return buffers;
}

// ---------------------------------------------------------------------------------------------
// Seed and command code: runs in a clone of a multithreaded process. Async-signal-safe only: raw
// system calls on memory prepared before clone (or on the seed's own copy of the buffers), no
// allocation, no locks, no stdio.

void SendReport(int fd, int32_t step, int32_t value) {
  const Report r{step, value};
  while (send(fd, &r, sizeof(r), MSG_NOSIGNAL) == -1 && errno == EINTR) {
  }
}

[[noreturn]] void ReportTo(int fd, bool is_socket, int32_t step, int32_t err) {
  if (is_socket) {
    SendReport(fd, step, err);
  } else {
    const Report r{step, err};
    WriteAll(fd, &r, sizeof(r));
  }
  _exit(127);
}

// Closes every fd but the sorted `keep` ones.
int CloseAllBut(const int* keep, size_t count) {
  unsigned first = 0;
  for (size_t i = 0; i < count; ++i) {
    const unsigned k = static_cast<unsigned>(keep[i]);
    if (k > first && syscall(__NR_close_range, first, k - 1, 0u) != 0) return errno;
    first = k + 1;
  }
  return syscall(__NR_close_range, first, ~0u, 0u) == 0 ? 0 : errno;
}

int SetDisposition(int sig, void (*handler)(int)) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  return sigaction(sig, &action, nullptr);
}

constexpr int kWaiterIgnores[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

bool ReadFull(int fd, char* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = read(fd, data + got, size - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      return false;
    }
  }
  return true;
}

// The command: the seed's fork (or the seed itself, kDirect). Reports failures on `error_fd`.
[[noreturn]] void RunCommand(const SeedArgs& a, int error_fd, const char* exec_path, const char* cwd, char** argv,
                             char** envp) {
  for (int sig : kWaiterIgnores) SetDisposition(sig, SIG_DFL);
  if (a.tree == SeedTree::kSubreaper && setpgid(0, 0) != 0) ReportTo(error_fd, false, kForkCommand, errno);
  const int keep[4] = {0, 1, 2, error_fd};  // error_fd > 2: moved there on receipt.
  if (int err = CloseAllBut(keep, 4); err != 0) ReportTo(error_fd, false, kCloseFds, err);
  if (chdir(cwd) != 0) ReportTo(error_fd, false, kChdir, errno);
  for (size_t i = 0; i < a.confine_count; ++i) {
    if (int err = a.confine[i].fn(a.confine[i].arg); err != 0) {
      ReportTo(error_fd, false, static_cast<int32_t>(kFixedCount + a.prepare_count + i), err);
    }
  }
  execve(exec_path, argv, envp);
  ReportTo(error_fd, false, kExec, errno != 0 ? errno : ENOEXEC);
}

// Waits for the command, passes its status to the runner, and (kSubreaper) ends every adopted
// descendant before exiting. As pid 1 (kInit) the seed's exit makes the kernel kill the rest.
[[noreturn]] void StandIn(const SeedArgs& a, pid_t command, int error_fd) {
  // kSubreaper: the command made its own process group before exec (RunCommand); the runner signals
  // that group, so the seed outlives a timeout's SIGKILL and sweeps what it adopted (reaper.h).
  if (a.tree == SeedTree::kSubreaper) ReportProcessGroup(error_fd, command);
  const int keep[1] = {a.control_fd};
  CloseAllBut(keep, 1);  // The runner's pipes reach EOF when the command's side closes them.
  int command_status = 0;
  if (a.tree == SeedTree::kSubreaper) {
    command_status = SweepKeepingCommand(command);
    if (command_status < 0) _exit(127);
  } else {
    while (true) {
      int status;
      const pid_t pid = waitpid(-1, &status, 0);
      if (pid == command) {
        command_status = status;
        break;
      }
      if (pid < 0 && errno != EINTR) _exit(127);
    }
  }
  SendReport(a.control_fd, kCommandStatus, command_status);
  if (a.tree == SeedTree::kInit) _exit(0);  // pid 1 cannot die by its own signal; the runner has the status.
  MirrorStatus(command_status);
}

[[noreturn]] void SeedMain(const SeedArgs& a) {
  const int control = a.control_fd;
  if (int err = CloseAllBut(a.keep, a.keep_count); err != 0) ReportTo(control, true, kCloseInherited, err);
  // The parent blocked every signal around clone; give the seed default dispositions (the waiter
  // kinds ignore the runner's SIGTERM so the command gets the grace period) and an empty mask.
  if (int err = ResetAllSignals(); err != 0) ReportTo(control, true, kSignals, err);
  if (a.tree != SeedTree::kDirect) {
    for (int sig : kWaiterIgnores) SetDisposition(sig, SIG_IGN);
  }
  if (setsid() < 0) ReportTo(control, true, kSetsid, errno);
  if (a.tree == SeedTree::kSubreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    ReportTo(control, true, kSubreaperStep, errno);
  }
  for (size_t i = 0; i < a.prepare_count; ++i) {
    if (int err = a.prepare[i].fn(a.prepare[i].arg); err != 0) {
      ReportTo(control, true, static_cast<int32_t>(kFixedCount + i), err);
    }
  }
  SendReport(control, kReady, 0);

  // Wait for the run. EOF: the pool let this seed go unused.
  Header h;
  int fds[4];
  char cmsg_space[CMSG_SPACE(sizeof(fds))];
  struct iovec iov = {&h, sizeof(h)};
  struct msghdr msg;
  std::memset(&msg, 0, sizeof(msg));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cmsg_space;
  msg.msg_controllen = sizeof(cmsg_space);
  ssize_t n;
  do {
    n = recvmsg(control, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n == 0) _exit(0);
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (n != static_cast<ssize_t>(sizeof(h)) || h.magic != kMagic || c == nullptr || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(fds)) || h.body_bytes > kSeedRequestBytes || h.rlimit_count > kMaxRlimits ||
      static_cast<uint64_t>(h.argc) + h.envc > kSeedRequestStrings) {
    _exit(127);  // Not the runner's request: nothing to report to.
  }
  std::memcpy(fds, CMSG_DATA(c), sizeof(fds));
  int error_fd = fds[3];
  if (!ReadFull(control, a.buffer, static_cast<size_t>(h.body_bytes))) ReportTo(error_fd, false, kReceive, EIO);
  // Split the body into its strings: exec path, cwd, argv, envp.
  const char* p = a.buffer;
  const char* end = a.buffer + h.body_bytes;
  auto next = [&]() -> char* {
    char* s = const_cast<char*>(p);
    while (p < end && *p != '\0') ++p;
    if (p == end) return nullptr;
    ++p;
    return s;
  };
  const char* exec_path = next();
  const char* cwd = next();
  char** argv = a.strings;
  char** envp = a.strings + h.argc + 1;
  for (uint32_t i = 0; i < h.argc; ++i) argv[i] = next();
  argv[h.argc] = nullptr;
  for (uint32_t i = 0; i < h.envc; ++i) envp[i] = next();
  envp[h.envc] = nullptr;
  if (exec_path == nullptr || cwd == nullptr || (h.argc > 0 && argv[h.argc - 1] == nullptr) ||
      (h.envc > 0 && envp[h.envc - 1] == nullptr)) {
    ReportTo(error_fd, false, kReceive, EINVAL);
  }
  // The seed closed 0, 1 and 2, so the received fds may land there, close-on-exec; dup2 onto the
  // same number would keep that flag. Move them above 2 first (the copies left below are replaced).
  for (int& fd : fds) {
    if (fd < 3) {
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
      if (moved < 0) ReportTo(error_fd, false, kDupStdio, errno);
      fd = moved;
    }
  }
  error_fd = fds[3];
  for (int i = 0; i < 3; ++i) {
    while (dup2(fds[i], i) < 0) {
      if (errno != EINTR) ReportTo(error_fd, false, kDupStdio, errno);
    }
  }
  for (uint32_t i = 0; i < h.rlimit_count; ++i) {
    const struct rlimit value = {static_cast<rlim_t>(h.rlimits[i].soft), static_cast<rlim_t>(h.rlimits[i].hard)};
    if (setrlimit(h.rlimits[i].resource, &value) != 0) ReportTo(error_fd, false, kSetRlimit, errno);
  }
  if (a.tree == SeedTree::kDirect) RunCommand(a, error_fd, exec_path, cwd, argv, envp);
  // vfork: no page tables to copy (the seed is a copy of the runner's whole address space). The
  // command writes no memory until exec: its steps use their own stack and system calls only, and
  // the signal dispositions, fds and cwd it changes are its own (no CLONE_SIGHAND/FILES/FS).
  const pid_t command = vfork();
  if (command < 0) ReportTo(error_fd, false, kForkCommand, errno);
  if (command == 0) RunCommand(a, error_fd, exec_path, cwd, argv, envp);
  StandIn(a, command, error_fd);
}

// End of the seed's code.
// ---------------------------------------------------------------------------------------------

absl::Status ReportError(const std::vector<std::string>& names, const Report& r) {
  const std::string name = r.step >= 0 && static_cast<size_t>(r.step) < names.size()
                               ? names[static_cast<size_t>(r.step)]
                               : absl::StrCat("seed step ", r.step);
  return MakeError(ErrnoToCode(r.value), absl::StrCat(name, " failed: ", strerror(r.value)));
}

}  // namespace

class Seed::Launcher : public ChildLauncher {
 public:
  explicit Launcher(Seed* seed) : seed_(seed) {}

  pid_t Launch(const LaunchRequest& request) override {
    if (seed_->launched_ || !seed_->ready_checked_ || !seed_->ready_.ok()) {
      errno = EINVAL;
      return -1;
    }
    seed_->launched_ = true;
    if (request.rlimits.size() > kMaxRlimits) {
      errno = E2BIG;
      return -1;
    }
    Header h;
    std::memset(&h, 0, sizeof(h));
    h.magic = kMagic;
    std::string body;
    auto add = [&body](const char* s) { body.append(s, std::strlen(s) + 1); };
    add(request.exec_path);
    add(request.cwd);
    for (char* const* a = request.argv; *a != nullptr; ++a, ++h.argc) add(*a);
    for (char* const* e = request.envp; *e != nullptr; ++e, ++h.envc) add(*e);
    if (!FitsSeed(body.size(), h.argc + h.envc)) {
      errno = E2BIG;
      return -1;
    }
    h.body_bytes = body.size();
    h.rlimit_count = static_cast<uint32_t>(request.rlimits.size());
    std::copy(request.rlimits.begin(), request.rlimits.end(), h.rlimits);
    const int fds[4] = {request.stdio[0], request.stdio[1], request.stdio[2], request.error_fd};
    char cmsg_space[CMSG_SPACE(sizeof(fds))];
    std::memset(cmsg_space, 0, sizeof(cmsg_space));
    struct iovec iov[2] = {{&h, sizeof(h)}, {body.data(), body.size()}};
    struct msghdr msg;
    std::memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    msg.msg_control = cmsg_space;
    msg.msg_controllen = sizeof(cmsg_space);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(fds));
    std::memcpy(CMSG_DATA(c), fds, sizeof(fds));
    ssize_t n;
    do {
      n = sendmsg(seed_->control_.get(), &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < static_cast<ssize_t>(sizeof(h))) {
      if (n >= 0) errno = EIO;
      return -1;
    }
    size_t sent = static_cast<size_t>(n) - sizeof(h);  // The rest of a large body follows.
    while (sent < body.size()) {
      n = send(seed_->control_.get(), body.data() + sent, body.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return -1;  // The seed died; the runner reaps it as a failed start.
      sent += static_cast<size_t>(n);
    }
    return seed_->pid_;
  }

  std::string StepName(int index) const override {
    return index >= 0 && static_cast<size_t>(index) < seed_->step_names_.size()
               ? seed_->step_names_[static_cast<size_t>(index)]
               : absl::StrCat("seed step ", index);
  }

  int CommandStatus(int raw_status) override {
    Report r;
    const ssize_t n = recv(seed_->control_.get(), &r, sizeof(r), MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof(r)) && r.step == kCommandStatus) return r.value;
    return raw_status;  // The seed was killed (timeout's SIGKILL) before it could pass a status on.
  }

 private:
  Seed* seed_;
};

bool FitsSeed(size_t bytes, size_t strings) {
  return bytes <= kSeedRequestBytes && strings <= kSeedRequestStrings;
}

Seed::~Seed() {
  control_.reset();  // An unused seed sees EOF and exits.
  if (!pidfd_.valid()) return;
  // Through the pidfd: the runner may have reaped the seed already (a run that failed to start),
  // and its pid may name another process by now. ESRCH and ECHILD then: nothing to do.
  if (launched_) syscall(__NR_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
  siginfo_t info;
  while (waitid(static_cast<idtype_t>(kPPidfd), static_cast<id_t>(pidfd_.get()), &info, WEXITED) < 0 &&
         errno == EINTR) {
  }
}

absl::Status Seed::WaitReady() {
  if (ready_checked_) return ready_;
  ready_checked_ = true;
  Report r;
  if (!ReadFull(control_.get(), reinterpret_cast<char*>(&r), sizeof(r))) {
    ready_ = MakeError(ErrorCode::kEIO, "the isolation seed exited before it was ready");
  } else if (r.step != kReady) {
    ready_ = ReportError(step_names_, r);
  }
  return ready_;
}

ChildLauncher* Seed::launcher() {
  if (launcher_ == nullptr) launcher_ = std::make_unique<Launcher>(this);
  return launcher_.get();
}

absl::StatusOr<std::unique_ptr<Seed>> StartSeed(const SeedPlan& plan) {
  const Buffers* buffers = SharedBuffers();
  if (buffers->bytes == nullptr) return ErrnoError(ENOMEM, "mmap(seed request buffers)");
  if (plan.prepare.size() > kMaxSteps || plan.confine.size() > kMaxSteps || plan.keep_fds.size() + 1 > kMaxKeep) {
    return MakeError(ErrorCode::kEINTERNAL, "isolation seed: too many steps or fds");
  }
  std::unique_ptr<Seed> seed(new Seed());
  for (const char* name : kFixedNames) seed->step_names_.push_back(name);
  for (const LayerStep& s : plan.prepare) seed->step_names_.push_back(s.name);
  for (const LayerStep& s : plan.confine) seed->step_names_.push_back(s.name);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError(errno, "socketpair(seed)");
  seed->control_.reset(sv[0]);
  UniqueFd child_end(sv[1]);

  auto args = std::make_unique<SeedArgs>();
  std::memset(args.get(), 0, sizeof(SeedArgs));
  args->control_fd = sv[1];
  args->keep[args->keep_count++] = sv[1];
  for (int fd : plan.keep_fds) args->keep[args->keep_count++] = fd;
  std::sort(args->keep, args->keep + args->keep_count);
  std::copy(plan.prepare.begin(), plan.prepare.end(), args->prepare);
  args->prepare_count = plan.prepare.size();
  std::copy(plan.confine.begin(), plan.confine.end(), args->confine);
  args->confine_count = plan.confine.size();
  args->tree = plan.tree;
  args->buffer = buffers->bytes;
  args->strings = buffers->strings;

  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  // A raw clone: glibc's fork() offers no namespace flags. The child works on a copy of this stack
  // and never returns from SeedMain.
  const long pid = syscall(SYS_clone, static_cast<unsigned long>(plan.clone_flags) | SIGCHLD, nullptr, nullptr,
                           nullptr, nullptr);
  if (pid == 0) SeedMain(*args);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return ErrnoError(clone_errno, "clone(isolation seed)");
  seed->pid_ = static_cast<pid_t>(pid);
  // Our unreaped child: its pid cannot be recycled yet, so the pidfd names the seed.
  const long pidfd = syscall(__NR_pidfd_open, seed->pid_, 0);
  if (pidfd < 0) {
    const int err = errno;
    kill(seed->pid_, SIGKILL);
    waitpid(seed->pid_, nullptr, 0);
    return ErrnoError(err, "pidfd_open(isolation seed)");
  }
  seed->pidfd_.reset(static_cast<int>(pidfd));
  fcntl(seed->pidfd_.get(), F_SETFD, FD_CLOEXEC);
  return seed;
}

}  // namespace sandbox::linux_layers
