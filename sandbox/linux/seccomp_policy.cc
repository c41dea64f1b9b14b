#include "sandbox/linux/seccomp_policy.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace sandbox::linux_layers {
namespace {

// clone(2) flags that create namespaces. clone3 passes its flags through a pointer a filter cannot
// read, so clone3 itself fails with ENOSYS and libc falls back to clone (Chromium does the same).
constexpr uint64_t kNamespaceCloneFlags[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS,
    CLONE_NEWCGROUP, 0x00000080 /* CLONE_NEWTIME */};

// Escapes from the sandbox or large attack surface; a build or test never needs them.
constexpr const char* kDeniedSyscalls[] = {
    "ptrace", "process_vm_readv", "process_vm_writev",                       // other processes' memory
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",     // the mount table
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",                                                       // namespaces
    "kexec_load", "kexec_file_load", "reboot",                                // the machine
    "init_module", "finit_module", "delete_module",                           // kernel modules
    "swapon", "swapoff",
    "bpf", "perf_event_open", "userfaultfd",                                  // kernel attack surface
    "io_uring_setup", "io_uring_enter", "io_uring_register",                  // bypasses seccomp
    "keyctl", "add_key", "request_key",                                       // keyrings
    "open_by_handle_at", "name_to_handle_at",                                 // shocker-style escape
    "acct", "quotactl", "lookup_dcookie",
};

// Every namespace-creating clone flag, as one mask.
constexpr uint64_t AllNamespaceFlags() {
  uint64_t all = 0;
  for (uint64_t f : kNamespaceCloneFlags) all |= f;
  return all;
}

// ioctl commands a strict sandbox still needs: terminal queries (isatty), window size, process group
// of the terminal (shells), non-blocking and close-on-exec toggles, bytes pending. TIOCSTI (inject
// input into the terminal) and TIOCLINUX are not among them.
constexpr uint64_t kSafeIoctls[] = {TCGETS,     TCSETS,  TCSETSW, TCSETSF, TIOCGWINSZ, TIOCSWINSZ,
                                    TIOCGPGRP,  TIOCSPGRP, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX,
                                    FIOASYNC};

// What sh, coreutils, make, compilers and interpreters call. Names this architecture lacks (e.g.
// "open" on arm64) are skipped when the profile is compiled.
constexpr const char* kAllowedSyscalls[] = {
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "open", "openat", "openat2", "close", "close_range", "creat", "lseek", "dup", "dup2",
    "dup3", "pipe", "pipe2", "fcntl", "flock", "fsync", "fdatasync", "truncate", "ftruncate",
    "fallocate", "fadvise64", "sendfile", "splice", "tee", "copy_file_range", "sync_file_range",
    "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents", "getdents64", "getcwd", "chdir", "fchdir",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link",
    "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
    "lchown", "fchownat", "umask", "utime", "utimes", "utimensat", "futimesat", "getxattr",
    "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    "mmap", "mprotect", "munmap", "mremap", "msync", "mincore", "madvise", "brk", "membarrier",
    "memfd_create", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
    "rt_sigpending", "rt_sigtimedwait", "sigaltstack", "kill", "tkill", "tgkill", "pause",
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid",
    "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "futex", "arch_prctl", "prctl",
    "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
    "getresuid", "getresgid", "getpgid", "getpgrp", "getsid", "setpgid", "setsid", "capget",
    "getrlimit", "setrlimit", "prlimit64", "getrusage", "getpriority", "setpriority", "times",
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min", "uname", "sysinfo",
    "getrandom", "restart_syscall", "time", "gettimeofday", "clock_gettime", "clock_getres",
    "clock_nanosleep", "nanosleep", "alarm", "getitimer", "setitimer", "timerfd_create",
    "timerfd_settime", "timerfd_gettime", "eventfd", "eventfd2", "poll", "ppoll", "select",
    "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "epoll_pwait2", "socketpair", "connect", "accept", "accept4", "bind", "listen",
    "getsockname", "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown",
    "setsockopt", "getsockopt",
};

}  // namespace

bool ArgCondition::Holds(uint64_t arg) const {
  switch (op) {
    case Op::kEq:
      return arg == value;
    case Op::kNe:
      return arg != value;
    case Op::kMaskedEq:
      return (arg & mask) == value;
  }
  return false;
}

SyscallRule Allow(std::string syscall, std::vector<ArgCondition> conditions) {
  return {std::move(syscall), SeccompAction::Allow(), std::move(conditions)};
}

SyscallRule Deny(std::string syscall, int errno_value, std::vector<ArgCondition> conditions) {
  return {std::move(syscall), SeccompAction::Errno(errno_value), std::move(conditions)};
}

SeccompProfile DefaultDenylistProfile(const SeccompOptions& options) {
  SeccompProfile profile{"default", SeccompAction::Allow(), {}};
  std::vector<SyscallRule>& rules = profile.rules;
  for (const char* name : kDeniedSyscalls) rules.push_back(Deny(name, EPERM));
  for (uint64_t flag : kNamespaceCloneFlags) {
    rules.push_back(Deny("clone", EPERM, {Arg(0).AnyBits(flag)}));
  }
  rules.push_back(Deny("clone3", ENOSYS));
  // ioctl's command is an unsigned int: the kernel ignores the upper half, so the filter must too.
  rules.push_back(Deny("ioctl", EPERM, {Arg(1).MaskedEq(0xffffffffu, TIOCSTI)}));
  rules.push_back(Deny("ioctl", EPERM, {Arg(1).MaskedEq(0xffffffffu, TIOCLINUX)}));
  if (!options.allow_network) {
    rules.push_back(Deny("socket", EAFNOSUPPORT, {Arg(0).Ne(AF_UNIX)}));
  } else {
    rules.push_back(Deny("socket", EPERM, {Arg(0).Eq(AF_PACKET)}));
    rules.push_back(Deny("socket", EPERM, {Arg(1).MaskedEq(0xf, SOCK_RAW)}));
  }
  return profile;
}

SeccompProfile StrictAllowlistProfile(const SeccompOptions& options) {
  SeccompProfile profile{"strict", SeccompAction::Errno(EPERM), {}};
  std::vector<SyscallRule>& rules = profile.rules;
  for (const char* name : kAllowedSyscalls) rules.push_back(Allow(name));
  rules.push_back(Deny("clone3", ENOSYS));
  rules.push_back(Allow("clone", {Arg(0).MaskedEq(AllNamespaceFlags(), 0)}));
  for (uint64_t cmd : kSafeIoctls) {
    rules.push_back(Allow("ioctl", {Arg(1).MaskedEq(0xffffffffu, cmd)}));
  }
  if (!options.allow_network) {
    rules.push_back(Allow("socket", {Arg(0).Eq(AF_UNIX)}));
    rules.push_back(Deny("socket", EAFNOSUPPORT, {Arg(0).Ne(AF_UNIX)}));
  } else {
    for (uint64_t domain : {AF_UNIX, AF_INET, AF_INET6}) {
      for (uint64_t type : {SOCK_STREAM, SOCK_DGRAM}) {
        rules.push_back(Allow("socket", {Arg(0).Eq(domain), Arg(1).MaskedEq(0xf, type)}));
      }
    }
  }
  return profile;
}

int SyscallNumber(const std::string& name) {
  // libseccomp's resolver scans its table; Evaluate asks for the same few hundred names repeatedly.
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new absl::flat_hash_map<std::string, int>();
  absl::MutexLock lock(&mu);
  auto [it, inserted] = cache->try_emplace(name, -1);
  if (inserted) {
    int nr = seccomp_syscall_resolve_name(name.c_str());
    it->second = nr < 0 ? -1 : nr;
  }
  return it->second;
}

SeccompAction Evaluate(const SeccompProfile& profile, const SyscallCall& call) {
  for (const SyscallRule& rule : profile.rules) {
    if (SyscallNumber(rule.syscall) != call.nr) continue;
    bool all = true;
    for (const ArgCondition& c : rule.conditions) all = all && c.Holds(call.args[c.index]);
    if (all) return rule.action;
  }
  return profile.default_action;
}

}  // namespace sandbox::linux_layers
