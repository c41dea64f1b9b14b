// Seccomp policies as data: a profile is a default action plus a table of per-syscall rules with
// optional argument conditions (the shape of Chromium's bpf_dsl, as a table). The same table is
// compiled to BPF by seccomp.cc (libseccomp) and evaluated directly by Evaluate(), so each profile's
// decisions are testable without a kernel, and the compiled filter can be checked against the table.
//
// Rule semantics: for a syscall, the first rule (in table order) whose conditions all hold decides;
// when none holds, the profile's default action decides. Tables are restricted to what libseccomp
// compiles faithfully, and CompileProfile rejects the rest: a syscall with an unconditional rule has
// no other rule (libseccomp would let the unconditional one win silently), no rule repeats the
// default action, and a rule compares each argument at most once.
//
// Thread-safety: profiles are immutable values; all functions are pure.
#ifndef SANDBOX_LINUX_SECCOMP_POLICY_H_
#define SANDBOX_LINUX_SECCOMP_POLICY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sandbox::linux_layers {

struct SeccompAction {
  enum class Kind { kAllow, kErrno, kKill };
  Kind kind = Kind::kAllow;
  int errno_value = 0;  // For kErrno.

  static SeccompAction Allow() { return {Kind::kAllow, 0}; }
  static SeccompAction Errno(int e) { return {Kind::kErrno, e}; }
  static SeccompAction Kill() { return {Kind::kKill, 0}; }
  bool operator==(const SeccompAction&) const = default;
};

// A condition on one syscall argument: (arg & mask) <op> value. The mask defaults to all 64 bits.
struct ArgCondition {
  enum class Op { kEq, kNe, kMaskedEq };
  int index = 0;  // 0..5
  Op op = Op::kEq;
  uint64_t value = 0;
  uint64_t mask = ~0ull;

  bool Holds(uint64_t arg) const;
};

// Factories, so tables read as sentences: DenyIf("socket", EAFNOSUPPORT, {Arg(0).Ne(AF_UNIX)}).
struct Arg {
  int index;
  explicit Arg(int i) : index(i) {}
  ArgCondition Eq(uint64_t v) const { return {index, ArgCondition::Op::kEq, v, ~0ull}; }
  ArgCondition Ne(uint64_t v) const { return {index, ArgCondition::Op::kNe, v, ~0ull}; }
  // (arg & mask) == v. Use for flags and for 32-bit arguments whose upper half the kernel ignores.
  ArgCondition MaskedEq(uint64_t mask, uint64_t v) const {
    return {index, ArgCondition::Op::kMaskedEq, v, mask};
  }
  ArgCondition AnyBits(uint64_t bits) const { return MaskedEq(bits, bits); }
};

struct SyscallRule {
  std::string syscall;  // Name as libseccomp knows it ("io_uring_setup").
  SeccompAction action;
  std::vector<ArgCondition> conditions;  // All must hold (AND). Empty: always.
};

SyscallRule Allow(std::string syscall, std::vector<ArgCondition> conditions = {});
SyscallRule Deny(std::string syscall, int errno_value, std::vector<ArgCondition> conditions = {});

struct SeccompProfile {
  std::string name;
  SeccompAction default_action;
  std::vector<SyscallRule> rules;
};

struct SeccompOptions {
  bool allow_network = false;  // false: every socket family but AF_UNIX fails with EAFNOSUPPORT.
};

// The default denylist: everything is allowed except the escape and attack-surface syscalls (ptrace,
// mount family, kexec, bpf, keyrings, unshare/setns and namespace-creating clone, io_uring,
// perf_event_open, module loading, swap, reboot, userfaultfd, TIOCSTI/TIOCLINUX, raw and packet
// sockets, and every non-unix socket when the network is off).
SeccompProfile DefaultDenylistProfile(const SeccompOptions& options);

// The strict allowlist: only the syscalls that ordinary build and test tools (sh, coreutils,
// compilers, interpreters) make; everything else fails with EPERM. The denylist's argument rules
// (TIOCSTI, namespace flags on clone, sockets) apply here too.
SeccompProfile StrictAllowlistProfile(const SeccompOptions& options);

// One syscall invocation, as the kernel shows it to a filter (architecture is always native here).
struct SyscallCall {
  int nr = 0;
  std::array<uint64_t, 6> args{};
};

// Evaluates `profile` for `call` by the table semantics above. Rules naming a syscall this
// architecture does not have never match.
SeccompAction Evaluate(const SeccompProfile& profile, const SyscallCall& call);

// The native syscall number for `name`, or -1 (libseccomp's resolver).
int SyscallNumber(const std::string& name);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_SECCOMP_POLICY_H_
