// Proofs in forked children: after the drop, a program exec'd as root has no capabilities, and
// no_new_privs survives exec. Each fails if its step is removed.
#include "sandbox/linux/capabilities.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "gtest/gtest.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

// Runs `script` with /bin/sh after `steps`; the child's exit code is the script's.
int RunScriptAfter(const std::function<int()>& apply, const char* script) {
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
    if (int rc = apply(); rc != 0) return 200 + rc;
    execl("/bin/sh", "sh", "-c", script, nullptr);
    return 199;
  });
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || !out->exit_code) return -1;
  return *out->exit_code;
}

TEST(CapabilitiesTest, ExecAsRootGainsNoCapabilities) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a non-root process has no capabilities to drop";
  absl::StatusOr<CapabilityDrop> drop = PrepareCapabilityDrop();
  ASSERT_TRUE(drop.ok());
  int rc = RunScriptAfter(
      [&] {
        StepFailure f = RunSteps(DropCapabilitiesSteps(*drop));
        return f.ok() ? 0 : 1;
      },
      "grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/self/status && "
      "grep -q '^CapPrm:[[:space:]]*0000000000000000$' /proc/self/status && "
      "grep -q '^CapBnd:[[:space:]]*0000000000000000$' /proc/self/status && "
      "! chown 12345 /proc/self/fd/0 2>/dev/null");
  EXPECT_EQ(rc, 0) << "a capability survived exec (exit " << rc << ")";
}

// The securebits are locked (so a later setuid(0) or exec cannot hand root its capabilities back)
// and the ambient set is empty, checked in the child right after the steps.
TEST(CapabilitiesTest, SecurebitsAreLockedAndAmbientIsEmpty) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: without CAP_SETPCAP the securebits stay as they are";
  absl::StatusOr<CapabilityDrop> drop = PrepareCapabilityDrop();
  ASSERT_TRUE(drop.ok());
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
    // Raise one ambient capability first (it must be inheritable for that), so that clearing the
    // ambient set is visible.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capget, &header, data) != 0) return 20;
    data[CAP_TO_INDEX(CAP_NET_BIND_SERVICE)].inheritable |= CAP_TO_MASK(CAP_NET_BIND_SERVICE);
    if (syscall(SYS_capset, &header, data) != 0) return 21;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) != 0) return 22;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) != 1) return 23;
    errno = 0;
    if (StepFailure f = RunSteps(DropCapabilitiesSteps(*drop)); !f.ok()) return 10;
    const int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    const int want = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (bits != want) return 11;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) != 0) return 12;
    if (prctl(PR_CAPBSET_READ, drop->last_cap, 0, 0, 0) != 0) return 13;
    if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) != 0) return 14;
    return 0;
  });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->Exited(0)) << out->ToString()
                              << " (10: a step failed, 11: securebits, 12: ambient, 13/14: bounding set, "
                                 "20-23: the ambient capability could not be raised first)";
}

TEST(CapabilitiesTest, NoNewPrivsSurvivesExec) {
  int rc = RunScriptAfter(
      [] {
        LayerStep s = NoNewPrivsStep();
        return s.fn(s.arg) == 0 ? 0 : 1;
      },
      "grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status");
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace sandbox::linux_layers
