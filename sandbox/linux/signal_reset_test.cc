// The signal reset every command gets before exec, down to the signals glibc reserves (32 and 33):
// glibc's sigaction refuses them, so a runner started with them ignored (Bazel's test runner is one)
// would pass SIG_IGN on through exec. The test ignores them itself through the raw system call, so it
// does not depend on how it was started.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sandbox/linux/child_step.h"
#include "sandbox/linux/forked_child.h"
#include "sandbox/runner.h"

namespace sandbox::linux_layers {
namespace {

struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

// The kernel's disposition of `sig` in this process, as SIG_IGN / SIG_DFL / a handler.
void (*Disposition(int sig))(int) {
  KernelSigaction old = {};
  EXPECT_EQ(syscall(SYS_rt_sigaction, sig, nullptr, &old, sizeof(old.mask)), 0) << sig;
  return old.handler;
}

// Sets `sig` to SIG_IGN through the raw call (glibc refuses 32 and 33); returns the old action.
KernelSigaction Ignore(int sig) {
  KernelSigaction ign = {SIG_IGN, 0, nullptr, 0}, old = {};
  EXPECT_EQ(syscall(SYS_rt_sigaction, sig, &ign, &old, sizeof(ign.mask)), 0) << sig;
  return old;
}

void Restore(int sig, const KernelSigaction& old) {
  EXPECT_EQ(syscall(SYS_rt_sigaction, sig, &old, nullptr, sizeof(old.mask)), 0) << sig;
}

TEST(SignalResetTest, SetDefaultDispositionReachesTheSignalsGlibcReserves) {
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([] {
    for (int sig : {1, 13, 32, 33, 34, 64}) {
      Ignore(sig);
      if (Disposition(sig) != SIG_IGN) return 10;
      if (SetDefaultDisposition(sig) != 0) return 11;
      if (Disposition(sig) != SIG_DFL) return 12;
    }
    if (SetDefaultDisposition(SIGKILL) != EINVAL) return 13;
    if (SetDefaultDisposition(65) != EINVAL) return 14;
    return 0;
  });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->Exited(0)) << out->ToString()
                              << " (10: not ignored, 11: reset failed, 12: not default, 13/14: no EINVAL)";
}

TEST(SignalResetTest, ResetAllSignalsClearsEveryIgnoreAndTheMask) {
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([] {
    for (int sig = 1; sig <= 64; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) Ignore(sig);
    }
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    if (ResetAllSignals() != 0) return 10;
    for (int sig = 1; sig <= 64; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP && Disposition(sig) != SIG_DFL) return 100 + sig;
    }
    sigset_t now;
    sigprocmask(SIG_SETMASK, nullptr, &now);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sigismember(&now, sig) == 1) return 20;
    }
    return 0;
  });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->Exited(0)) << out->ToString() << " (10: reset failed, 20: still blocked, 100+n: signal n)";
}

// Through the runner: a command exec'd directly (grep, no shell between) reports SigIgn as exec
// handed it over, with the runner ignoring 32, 33 and the last signal.
TEST(SignalResetTest, ARunCommandStartsWithNoSignalIgnoredEvenTheReservedOnes) {
  const std::vector<int> signals = {32, 33, 64};
  std::vector<KernelSigaction> saved;
  for (int sig : signals) saved.push_back(Ignore(sig));
  RunRequest request;
  request.argv = {"/bin/grep", "^SigIgn:", "/proc/self/status"};
  request.cwd = "/";
  request.wall_timeout = absl::Seconds(20);
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  for (size_t i = 0; i < signals.size(); ++i) Restore(signals[i], saved[i]);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->out.data, "SigIgn:\t0000000000000000\n");
}

}  // namespace
}  // namespace sandbox::linux_layers
