// The compiled filter agrees with its table (emulated, no kernel), and in a forked child the kernel
// enforces it: each proof below fails if the filter is not installed.
#include "sandbox/linux/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
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
#include <vector>

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

// The emulator on hand-written programs, one instruction class at a time, with the kernel's
// classic-BPF semantics (Documentation/networking/filter.rst): what libseccomp emits today uses few
// of them, but a filter from another libseccomp version may use any.
uint32_t Emulate(std::vector<sock_filter> insns, const seccomp_data& data = {}) {
  return EmulateFilter(BpfProgram{"test", std::move(insns)}, data);
}

TEST(SeccompEmulatorTest, LoadsImmediateLengthMemoryAndAbsolute) {
  const sock_filter ret_a = BPF_STMT(BPF_RET | BPF_A, 0);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_IMM, 7), ret_a}), 7u);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), ret_a}), sizeof(seccomp_data));
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_IMM, 5), BPF_STMT(BPF_ST, 15), BPF_STMT(BPF_LD | BPF_IMM, 0),
                     BPF_STMT(BPF_LD | BPF_MEM, 15), ret_a}),
            5u);
  seccomp_data data{};
  data.nr = 42;
  data.args[5] = 0x1122334455667788ull;
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), ret_a}, data), 42u);
  // The last word of seccomp_data (the high half of args[5] on little-endian) is in range.
  const uint32_t last = sizeof(seccomp_data) - 4;
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, last), ret_a}, data), 0x11223344u);
  // Past the end, or a scratch word that does not exist: the kernel would have refused the filter.
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, last + 1), ret_a}, data),
            SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_MEM, BPF_MEMWORDS), ret_a}), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_ST, BPF_MEMWORDS), ret_a}), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_STX, BPF_MEMWORDS), ret_a}), SECCOMP_RET_KILL_PROCESS);
}

TEST(SeccompEmulatorTest, IndexRegisterAndTransfers) {
  const sock_filter ret_a = BPF_STMT(BPF_RET | BPF_A, 0);
  const sock_filter txa = BPF_STMT(BPF_MISC | BPF_TXA, 0);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LDX | BPF_IMM, 9), txa, ret_a}), 9u);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0), txa, ret_a}), sizeof(seccomp_data));
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LDX | BPF_IMM, 6), BPF_STMT(BPF_STX, 2), BPF_STMT(BPF_LDX | BPF_IMM, 0),
                     BPF_STMT(BPF_LDX | BPF_MEM, 2), txa, ret_a}),
            6u);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LDX | BPF_MEM, BPF_MEMWORDS), ret_a}), SECCOMP_RET_KILL_PROCESS);
  // TAX copies A to X; A is then overwritten and restored from X.
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_IMM, 4), BPF_STMT(BPF_MISC | BPF_TAX, 0),
                     BPF_STMT(BPF_LD | BPF_IMM, 0), txa, ret_a}),
            4u);
}

TEST(SeccompEmulatorTest, ArithmeticAndDivisionByZero) {
  auto alu = [](uint32_t a, uint16_t op, uint32_t k) {
    return Emulate({BPF_STMT(BPF_LD | BPF_IMM, a), BPF_STMT(BPF_ALU | op | BPF_K, k),
                    BPF_STMT(BPF_RET | BPF_A, 0)});
  };
  EXPECT_EQ(alu(17, BPF_DIV, 5), 3u);
  EXPECT_EQ(alu(17, BPF_MOD, 5), 2u);
  EXPECT_EQ(alu(17, BPF_DIV, 0), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(alu(17, BPF_MOD, 0), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(alu(6, BPF_SUB, 8), static_cast<uint32_t>(-2));
  EXPECT_EQ(alu(6, BPF_MUL, 7), 42u);
  EXPECT_EQ(alu(1, BPF_LSH, 33), 2u);  // Shifts take the count modulo 32.
  EXPECT_EQ(alu(0x80, BPF_RSH, 4), 8u);
  EXPECT_EQ(alu(0xF0, BPF_XOR, 0xFF), 0x0Fu);
  // By X: a zero X is as fatal as a zero K.
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_IMM, 9), BPF_STMT(BPF_LDX | BPF_IMM, 0),
                     BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), BPF_STMT(BPF_RET | BPF_A, 0)}),
            SECCOMP_RET_KILL_PROCESS);
}

TEST(SeccompEmulatorTest, ConditionalJumpsAtTheirEdges) {
  // A = a; if (A <op> k) return 1; else return 2.
  auto jump = [](uint32_t a, uint16_t op, uint32_t k) {
    return Emulate({BPF_STMT(BPF_LD | BPF_IMM, a), BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 1),
                    BPF_STMT(BPF_RET | BPF_K, 1), BPF_STMT(BPF_RET | BPF_K, 2)});
  };
  EXPECT_EQ(jump(5, BPF_JGT, 5), 2u);
  EXPECT_EQ(jump(6, BPF_JGT, 5), 1u);
  EXPECT_EQ(jump(5, BPF_JGE, 5), 1u);
  EXPECT_EQ(jump(4, BPF_JGE, 5), 2u);
  EXPECT_EQ(jump(5, BPF_JEQ, 5), 1u);
  EXPECT_EQ(jump(6, BPF_JSET, 4), 1u);
  EXPECT_EQ(jump(6, BPF_JSET, 1), 2u);
  // JA skips k instructions; falling off the end is invalid.
  EXPECT_EQ(Emulate({BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(BPF_RET | BPF_K, 1),
                     BPF_STMT(BPF_RET | BPF_K, 2)}),
            2u);
  EXPECT_EQ(Emulate({BPF_STMT(BPF_LD | BPF_IMM, 1)}), SECCOMP_RET_KILL_PROCESS);
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
