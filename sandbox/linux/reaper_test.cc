// Proof: a double-forked setsid daemon that outlives its parent is gone when the command's run ends,
// and the command's own exit status and signal come through the waiter. Fails without the layer.
#include "sandbox/linux/reaper.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

class ReaperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status probe = ProbeReaper();
    if (!probe.ok()) GTEST_SKIP() << probe.message();
  }

  ChildOutcome RunReaped(const std::string& script) {
    absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
      LayerStep step = SubreaperStep();
      if (step.fn(step.arg) != 0) return 90;
      execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
      return 92;
    });
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : ChildOutcome{};
  }
};

TEST_F(ReaperTest, DoubleForkedDaemonIsGoneWhenTheRunEnds) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // The daemon inherits the write end: EOF means it is dead.
  ChildOutcome out = RunReaped(absl::StrCat("(setsid sh -c 'sleep 1000' >&", fds[1], " &); exit 3"));
  close(fds[1]);
  EXPECT_TRUE(out.Exited(3)) << out.ToString();
  pollfd pfd{fds[0], POLLIN, 0};
  char c;
  EXPECT_TRUE(poll(&pfd, 1, 5000) == 1 && read(fds[0], &c, 1) == 0)
      << "the daemon still holds the pipe: it outlived the run";
  close(fds[0]);
}

TEST_F(ReaperTest, SignalOfTheCommandIsMirrored) {
  ChildOutcome out = RunReaped("kill -KILL $$");
  ASSERT_TRUE(out.term_signal.has_value()) << out.ToString();
  EXPECT_EQ(*out.term_signal, SIGKILL);
}

}  // namespace
}  // namespace sandbox::linux_layers
