// The compiled filter agrees with its table (emulated, no kernel), and in a forked child the kernel
// enforces it: each proof below fails if the filter is not installed.
#include "sandbox/linux/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "gtest/gtest.h"
#include "sandbox/errors.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

// Argument values that exercise every condition in the tables: each value a rule compares with, its
// neighbours, and values with garbage in the upper half.
std::vector<uint64_t> ProbeValues(const SeccompProfile& p) {
  std::vector<uint64_t> v = {0, 1, 2, 0xffffffffull, ~0ull, 0xdead000000000000ull};
  for (const SyscallRule& r : p.rules) {
    for (const ArgCondition& c : r.conditions) {
      for (uint64_t x : std::initializer_list<uint64_t>{c.value, c.value + 1, c.value - 1, c.value | 0xdead000000000000ull,
                         c.value | SOCK_CLOEXEC, c.value | SIGCHLD}) {
        v.push_back(x);
      }
    }
  }
  return v;
}

void ExpectCompiledMatchesTable(const SeccompProfile& profile) {
  absl::StatusOr<BpfProgram> prog = CompileProfile(profile);
  ASSERT_TRUE(prog.ok()) << prog.status();
  std::vector<uint64_t> values = ProbeValues(profile);
  std::set<int> conditional;  // Syscalls whose decision depends on arguments: probe those densely.
  for (const SyscallRule& r : profile.rules) {
    if (!r.conditions.empty()) conditional.insert(SyscallNumber(r.syscall));
  }
  for (int nr = 0; nr < 460; ++nr) {
    const bool dense = conditional.count(nr) > 0;
    for (int arg = 0; arg < (dense ? 2 : 1); ++arg) {
      for (uint64_t value : dense ? values : std::vector<uint64_t>{0, ~0ull}) {
        SyscallCall call{nr, {}};
        call.args[arg] = value;
        SeccompAction want = Evaluate(profile, call);
        SeccompAction got = DecodeAction(EmulateFilter(*prog, MakeSeccompData(call)));
        ASSERT_EQ(got, want) << profile.name << ": syscall " << nr << " arg" << arg << "=" << value;
      }
    }
  }
}

TEST(SeccompCompileTest, DefaultProfileCompilesToItsTable) {
  ExpectCompiledMatchesTable(DefaultDenylistProfile({.allow_network = false}));
  ExpectCompiledMatchesTable(DefaultDenylistProfile({.allow_network = true}));
}

TEST(SeccompCompileTest, StrictProfileCompilesToItsTable) {
  ExpectCompiledMatchesTable(StrictAllowlistProfile({.allow_network = false}));
  ExpectCompiledMatchesTable(StrictAllowlistProfile({.allow_network = true}));
}

TEST(SeccompCompileTest, ForeignArchitectureIsKilled) {
  absl::StatusOr<BpfProgram> prog = CompileProfile(DefaultDenylistProfile({}));
  ASSERT_TRUE(prog.ok());
  seccomp_data d = MakeSeccompData({SyscallNumber("read"), {}});
  d.arch = 0x40000003;  // AUDIT_ARCH_I386
  EXPECT_EQ(DecodeAction(EmulateFilter(*prog, d)), SeccompAction::Kill());
}

TEST(SeccompCompileTest, RejectsTablesLibseccompWouldMisread) {
  SeccompProfile mixed{"mixed", SeccompAction::Errno(EPERM),
                       {Deny("ioctl", EACCES, {Arg(1).Eq(1)}), Allow("ioctl")}};
  EXPECT_EQ(CodeOf(CompileProfile(mixed).status()), ErrorCode::kEINVAL);
  SeccompProfile repeat{"repeat", SeccompAction::Allow(), {Allow("read")}};
  EXPECT_EQ(CodeOf(CompileProfile(repeat).status()), ErrorCode::kEINVAL);
  SeccompProfile twice{"twice", SeccompAction::Allow(), {Deny("read", EPERM, {Arg(0).Eq(1), Arg(0).Ne(2)})}};
  EXPECT_EQ(CodeOf(CompileProfile(twice).status()), ErrorCode::kEINVAL);
}

// In a forked child: no_new_privs, the filter, then `attempt`. The child's exit code is ExpectErrno's.
void ExpectDeniedInChild(const SeccompProfile& profile, int expected_errno,
                         const std::function<long()>& attempt,
                         const std::function<void()>& before_filter = [] {}) {
  absl::StatusOr<BpfProgram> prog = CompileProfile(profile);
  ASSERT_TRUE(prog.ok()) << prog.status();
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
    before_filter();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 90;
    if (InstallFilter(&*prog) != 0) return 91;
    return ExpectErrno(attempt(), expected_errno);
  });
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->exit_code.has_value()) << out->ToString();
  EXPECT_EQ(*out->exit_code, 0) << DescribeExpectErrno(*out->exit_code);
}

class SeccompKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
      GTEST_SKIP() << "kernel built without CONFIG_SECCOMP";
    }
  }
  SeccompProfile default_ = DefaultDenylistProfile({});
};

TEST_F(SeccompKernelTest, PtraceIsEperm) {
  ExpectDeniedInChild(default_, EPERM, [] { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); });
}

TEST_F(SeccompKernelTest, MountIsEperm) {
  // Without the filter this succeeds for root (and fails with EPERM for others: skip then).
  if (geteuid() != 0) GTEST_SKIP() << "needs root to tell the filter's EPERM from the kernel's";
  // A private mount namespace first, so that without the filter the mount would not leak out.
  ExpectDeniedInChild(
      default_, EPERM, [] { return static_cast<long>(mount("none", "/mnt", "tmpfs", 0, nullptr)); },
      [] { unshare(CLONE_NEWNS); mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr); });
}

TEST_F(SeccompKernelTest, UnshareIsEperm) {
  ExpectDeniedInChild(default_, EPERM, [] { return static_cast<long>(unshare(CLONE_NEWUTS)); });
}

TEST_F(SeccompKernelTest, CloneIntoNewUserNamespaceIsEperm) {
  ExpectDeniedInChild(default_, EPERM, [] {
    return syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, 0);
  });
}

TEST_F(SeccompKernelTest, KeyctlIsEperm) {
  ExpectDeniedInChild(default_, EPERM, [] {
    return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
  });
}

TEST_F(SeccompKernelTest, IoUringSetupIsEperm) {
  ExpectDeniedInChild(default_, EPERM, [] {
    io_uring_params params{};
    return syscall(SYS_io_uring_setup, 1, &params);
  });
}

TEST_F(SeccompKernelTest, InetSocketIsRefusedWithNetworkOff) {
  ExpectDeniedInChild(default_, EAFNOSUPPORT, [] { return static_cast<long>(socket(AF_INET, SOCK_STREAM, 0)); });
}

TEST_F(SeccompKernelTest, TiocstiIsImpossible) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) GTEST_SKIP() << "no pty available";
  const char* slave_name = ptsname(master);
  ASSERT_NE(slave_name, nullptr);
  std::string slave(slave_name);
  ExpectDeniedInChild(default_, EPERM, [&] {
    setsid();
    int fd = open(slave.c_str(), O_RDWR);  // Becomes the controlling terminal of the new session.
    if (fd < 0) return 0L;
    char c = 'x';
    return static_cast<long>(ioctl(fd, TIOCSTI, &c));
  });
  close(master);
}

TEST_F(SeccompKernelTest, StrictProfileRunsAShellAndDeniesPtrace) {
  SeccompProfile strict = StrictAllowlistProfile({});
  ExpectDeniedInChild(strict, EPERM, [] { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); });
  absl::StatusOr<BpfProgram> prog = CompileProfile(strict);
  ASSERT_TRUE(prog.ok());
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 90;
    if (InstallFilter(&*prog) != 0) return 91;
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execl("/bin/sh", "sh", "-c", "echo hello; ls / >/dev/null; exit 7", nullptr);
    return 92;
  });
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->Exited(7)) << out->ToString();
}

}  // namespace
}  // namespace sandbox::linux_layers
