// Proofs in forked children: after the drop, a program exec'd as root has no capabilities, and
// no_new_privs survives exec. Each fails if its step is removed.
#include "sandbox/linux/capabilities.h"

#include <sys/prctl.h>
#include <unistd.h>

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
