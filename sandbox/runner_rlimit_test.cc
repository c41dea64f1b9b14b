// Issue 9, part 2: the rlimit semantics the runner relies on, pinned against the real kernel.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sandbox/runner.h"
#include "sandbox/runner_test_util.h"

namespace sandbox {
namespace {

using ::sandbox::testing::HelperPath;
using ::sandbox::testing::Request;

std::string RunHelper(std::vector<std::string> args, const Limits& limits) {
  args.insert(args.begin(), HelperPath());
  RunRequest request = Request(std::move(args));
  request.limits = limits;
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return "";
  EXPECT_EQ(result->exit_code, 0) << result->err.data;
  return result->out.data;
}

TEST(RunnerRlimitTest, ChildSeesTheTableSoftAndHard) {
  Limits limits;
  limits.cpu_seconds = 3;
  limits.file_size_bytes = 1000000;
  limits.open_files = 64;
  EXPECT_EQ(RunHelper({"rlimit", "CPU"}, limits), "3:4\n");  // hard = soft + 1
  EXPECT_EQ(RunHelper({"rlimit", "FSIZE"}, limits), "1000000:1000000\n");
  EXPECT_EQ(RunHelper({"rlimit", "NOFILE"}, limits), "64:64\n");
  EXPECT_EQ(RunHelper({"rlimit", "CORE"}, limits), "0:0\n");
}

TEST(RunnerRlimitTest, ChildCannotRaiseAHardLimitTheRunnerSet) {
  Limits limits;
  limits.open_files = 64;
  const std::string raised = RunHelper({"raise-hard", "NOFILE"}, limits);
  if (absl::StartsWith(raised, "skip:")) GTEST_SKIP() << raised;
  // Unprivileged: lowering the hard limit is one-way.
  EXPECT_EQ(raised, "EPERM\n");
  // And soft can never exceed hard, privileged or not.
  EXPECT_EQ(RunHelper({"soft-above-hard", "NOFILE"}, limits), "EINVAL\n");
}

TEST(RunnerRlimitTest, CpuLimitCountsCpuTimeNotWallTime) {
  RunRequest request = Request({"/bin/sleep", "3"});
  request.limits.cpu_seconds = 1;
  request.wall_timeout = absl::Milliseconds(1500);
  request.kill_grace = absl::Milliseconds(200);
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  ASSERT_TRUE(result.ok()) << result.status();
  // The sleeper used almost no CPU: RLIMIT_CPU never fired; the wall timeout ended it.
  EXPECT_TRUE(result->timed_out);
  EXPECT_EQ(result->term_signal, SIGTERM);
}

TEST(RunnerRlimitTest, FsizeStopsAWriteExactlyAtTheLimit) {
  Limits limits;
  limits.file_size_bytes = 1000000;  // Not a multiple of the 4096-byte writes: a short write first.
  RunRequest request = Request({HelperPath(), "write-file", "out.bin", "5000000", "ignore-xfsz"});
  request.limits = limits;
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->out.data, "wrote 1000000 EFBIG\n");
  struct stat st;
  ASSERT_EQ(stat((request.cwd + "/out.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1000000);

  // Without a handler, the write past the limit raises SIGXFSZ, which ends the program.
  request.argv = {HelperPath(), "write-file", "out2.bin", "5000000"};
  result = sandbox::Run(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->term_signal, SIGXFSZ);
  ASSERT_EQ(stat((request.cwd + "/out2.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1000000);
}

TEST(RunnerRlimitTest, TheParentsOwnLimitsAreUnchanged) {
  const int resources[] = {RLIMIT_CORE, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_AS,
                           RLIMIT_NPROC};
  std::vector<struct rlimit> before;
  for (int r : resources) {
    struct rlimit value;
    ASSERT_EQ(getrlimit(r, &value), 0);
    before.push_back(value);
  }
  RunRequest request = Request({"/bin/true"});
  request.limits.cpu_seconds = 1;
  request.limits.file_size_bytes = 1;
  request.limits.open_files = 16;
  request.limits.address_space_bytes = 1ull << 32;
  request.limits.processes = 64;
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0);
  for (size_t i = 0; i < std::size(resources); ++i) {
    struct rlimit after;
    ASSERT_EQ(getrlimit(resources[i], &after), 0);
    EXPECT_EQ(after.rlim_cur, before[i].rlim_cur) << "resource " << resources[i];
    EXPECT_EQ(after.rlim_max, before[i].rlim_max) << "resource " << resources[i];
  }
}

}  // namespace
}  // namespace sandbox
