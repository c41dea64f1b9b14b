// Seccomp-BPF: compiles a SeccompProfile (seccomp_policy.h) with libseccomp in the parent, and
// installs the compiled program in the child as the last step before exec.
//
// Thread-safety: CompileProfile and EmulateFilter are pure and thread-safe. InstallFilterInChild is
// async-signal-safe (one prctl and one seccomp syscall) and must follow no_new_privs.
#ifndef SANDBOX_LINUX_SECCOMP_H_
#define SANDBOX_LINUX_SECCOMP_H_

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/linux/child_step.h"
#include "sandbox/linux/seccomp_policy.h"

namespace sandbox::linux_layers {

// A compiled classic-BPF filter for the native architecture; foreign architectures are killed.
struct BpfProgram {
  std::string profile_name;
  std::vector<sock_filter> instructions;
};

// Compiles `profile`. InvalidArgument (EINVAL) when the table breaks the rules in seccomp_policy.h;
// EIO when libseccomp fails.
absl::StatusOr<BpfProgram> CompileProfile(const SeccompProfile& profile);

// Runs `program` on `data` as the kernel would and returns the raw SECCOMP_RET_* value. Pure: for
// tests that check a compiled filter against its table without a kernel.
uint32_t EmulateFilter(const BpfProgram& program, const seccomp_data& data);

// The SeccompAction a raw SECCOMP_RET_* value stands for.
SeccompAction DecodeAction(uint32_t ret);

// A seccomp_data for a native syscall.
seccomp_data MakeSeccompData(const SyscallCall& call);

// Installs the BpfProgram `program` points to on the calling thread; 0 or an errno. Requires
// no_new_privs (or CAP_SYS_ADMIN). Async-signal-safe.
int InstallFilter(const void* program);

// The layer's one child step, named as the call it makes.
LayerStep InstallFilterStep(const BpfProgram& program);

}  // namespace sandbox::linux_layers

#endif  // SANDBOX_LINUX_SECCOMP_H_
