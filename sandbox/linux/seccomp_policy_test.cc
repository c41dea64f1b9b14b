// The profiles' decisions, from the tables alone: no kernel, no compiled filter.
#include "sandbox/linux/seccomp_policy.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "gtest/gtest.h"

namespace sandbox::linux_layers {
namespace {

SyscallCall Call(const char* name, std::array<uint64_t, 6> args = {}) {
  int nr = SyscallNumber(name);
  EXPECT_GE(nr, 0) << name;
  return {nr, args};
}

const SeccompAction kAllow = SeccompAction::Allow();
const SeccompAction kEperm = SeccompAction::Errno(EPERM);

TEST(DefaultProfileTest, DeniesEscapeSyscalls) {
  SeccompProfile p = DefaultDenylistProfile({});
  for (const char* name : {"ptrace", "mount", "umount2", "kexec_load", "bpf", "keyctl", "add_key",
                           "request_key", "unshare", "setns", "io_uring_setup", "io_uring_enter",
                           "perf_event_open", "init_module", "finit_module", "swapon", "reboot",
                           "userfaultfd", "open_by_handle_at", "process_vm_readv"}) {
    EXPECT_EQ(Evaluate(p, Call(name)), kEperm) << name;
  }
}

TEST(DefaultProfileTest, AllowsOrdinarySyscalls) {
  SeccompProfile p = DefaultDenylistProfile({});
  for (const char* name : {"read", "write", "openat", "execve", "mmap", "wait4", "getdents64"}) {
    EXPECT_EQ(Evaluate(p, Call(name)), kAllow) << name;
  }
}

TEST(DefaultProfileTest, CloneWithNamespaceFlagsIsDenied) {
  SeccompProfile p = DefaultDenylistProfile({});
  EXPECT_EQ(Evaluate(p, Call("clone", {SIGCHLD})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("clone", {CLONE_VM | CLONE_THREAD | CLONE_SIGHAND})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("clone", {SIGCHLD | CLONE_NEWUSER})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("clone", {SIGCHLD | CLONE_NEWNET})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("clone3")), SeccompAction::Errno(ENOSYS));
}

TEST(DefaultProfileTest, TiocstiDeniedWhateverTheUpperHalf) {
  SeccompProfile p = DefaultDenylistProfile({});
  EXPECT_EQ(Evaluate(p, Call("ioctl", {0, TIOCSTI})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("ioctl", {0, 0xdead000000000000ull | TIOCSTI})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("ioctl", {0, TCGETS})), kAllow);
}

// TIOCLINUX's selection subcommands paste into a virtual console's input, as TIOCSTI does.
TEST(DefaultProfileTest, TioclinuxDeniedWhateverTheUpperHalf) {
  SeccompProfile p = DefaultDenylistProfile({});
  EXPECT_EQ(Evaluate(p, Call("ioctl", {0, TIOCLINUX})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("ioctl", {0, 0xdead000000000000ull | TIOCLINUX})), kEperm);
}

TEST(DefaultProfileTest, NetworkOffLeavesOnlyUnixSockets) {
  SeccompProfile p = DefaultDenylistProfile({.allow_network = false});
  EXPECT_EQ(Evaluate(p, Call("socket", {AF_UNIX, SOCK_STREAM})), kAllow);
  for (uint64_t domain : {AF_INET, AF_INET6, AF_PACKET, AF_NETLINK}) {
    EXPECT_EQ(Evaluate(p, Call("socket", {domain, SOCK_STREAM})), SeccompAction::Errno(EAFNOSUPPORT))
        << domain;
  }
}

TEST(DefaultProfileTest, NetworkOnStillDeniesRawAndPacket) {
  SeccompProfile p = DefaultDenylistProfile({.allow_network = true});
  EXPECT_EQ(Evaluate(p, Call("socket", {AF_INET, SOCK_STREAM})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("socket", {AF_INET, SOCK_RAW})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("socket", {AF_INET, SOCK_RAW | SOCK_CLOEXEC})), kEperm);
  EXPECT_EQ(Evaluate(p, Call("socket", {AF_PACKET, SOCK_DGRAM})), kEperm);
}

TEST(StrictProfileTest, AllowsOnlyTheList) {
  SeccompProfile p = StrictAllowlistProfile({});
  EXPECT_EQ(Evaluate(p, Call("read")), kAllow);
  EXPECT_EQ(Evaluate(p, Call("execve")), kAllow);
  for (const char* name : {"ptrace", "mount", "unshare", "keyctl", "io_uring_setup", "mbind",
                           "setuid", "chroot", "bpf"}) {
    EXPECT_EQ(Evaluate(p, Call(name)), kEperm) << name;
  }
}

TEST(StrictProfileTest, IoctlOnlyFromTheSafeList) {
  SeccompProfile p = StrictAllowlistProfile({});
  EXPECT_EQ(Evaluate(p, Call("ioctl", {1, TCGETS})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("ioctl", {1, 0xffffffff00000000ull | TIOCGWINSZ})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("ioctl", {1, TIOCSTI})), kEperm);
}

TEST(StrictProfileTest, CloneOnlyWithoutNamespaceFlags) {
  SeccompProfile p = StrictAllowlistProfile({});
  EXPECT_EQ(Evaluate(p, Call("clone", {SIGCHLD})), kAllow);
  EXPECT_EQ(Evaluate(p, Call("clone", {SIGCHLD | CLONE_NEWPID})), kEperm);
  // clone3's flags sit in memory the filter cannot read: ENOSYS sends glibc (threads, posix_spawn)
  // back to clone, whose flags it can. The strict default, EPERM, would fail every new thread.
  EXPECT_EQ(Evaluate(p, Call("clone3")), SeccompAction::Errno(ENOSYS));
}

TEST(StrictProfileTest, SocketsFollowTheNetworkSwitch) {
  SeccompProfile off = StrictAllowlistProfile({.allow_network = false});
  EXPECT_EQ(Evaluate(off, Call("socket", {AF_UNIX, SOCK_STREAM})), kAllow);
  EXPECT_EQ(Evaluate(off, Call("socket", {AF_INET, SOCK_STREAM})), SeccompAction::Errno(EAFNOSUPPORT));
  SeccompProfile on = StrictAllowlistProfile({.allow_network = true});
  EXPECT_EQ(Evaluate(on, Call("socket", {AF_INET6, SOCK_STREAM | SOCK_CLOEXEC})), kAllow);
  EXPECT_EQ(Evaluate(on, Call("socket", {AF_INET, SOCK_RAW})), kEperm);
}

TEST(ArgConditionTest, Operators) {
  EXPECT_TRUE(Arg(0).Eq(5).Holds(5));
  EXPECT_FALSE(Arg(0).Eq(5).Holds(6));
  EXPECT_TRUE(Arg(0).Ne(5).Holds(6));
  EXPECT_TRUE(Arg(0).MaskedEq(0xff, 0x12).Holds(0xab12));
  EXPECT_TRUE(Arg(0).AnyBits(0x4).Holds(0x6));
  EXPECT_FALSE(Arg(0).AnyBits(0x4).Holds(0x3));
}

}  // namespace
}  // namespace sandbox::linux_layers
