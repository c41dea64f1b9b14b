#include "agent/observe/replay.h"

#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "agent/observe/test_util.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

// ---- No side effects -------------------------------------------------------------------------
//
// The proof runs the replay in a child process under a seccomp filter that kills the process on any
// attempt to start a process (fork, vfork, clone, clone3, execve, execveat) or to create, modify,
// rename or remove a file (open/openat for writing or creating, creat, truncate, rename*, unlink*,
// mkdir*, link*, symlink*; openat2 entirely, since its flags are behind a pointer). The child reads
// nothing from disk: the trace is parsed before the fork.

constexpr int kSkip = 77;

// Installs the filter; false when the kernel or libseccomp cannot.
bool DenyProcessesAndWrites() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return false;
  const uint32_t kill = SCMP_ACT_KILL_PROCESS;
  bool ok = true;
  for (int nr : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(clone), SCMP_SYS(clone3),
                 SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(creat), SCMP_SYS(truncate),
                 SCMP_SYS(ftruncate), SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2),
                 SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
                 SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat),
                 SCMP_SYS(openat2), SCMP_SYS(mknod), SCMP_SYS(mknodat)}) {
    ok = ok && seccomp_rule_add(ctx, kill, nr, 0) == 0;
  }
  for (unsigned flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND}) {
    ok = ok &&
         seccomp_rule_add(ctx, kill, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag)) == 0 &&
         seccomp_rule_add(ctx, kill, SCMP_SYS(openat), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
  }
  ok = ok && seccomp_load(ctx) == 0;
  seccomp_release(ctx);
  return ok;
}

// Runs `body` in a child under the filter; returns its wait status.
template <typename Body>
int RunConfined(Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!DenyProcessesAndWrites()) _exit(kSkip);
    _exit(body());
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

TEST(ReplayNoSideEffectsTest, TheFilterCatchesAProcessAndAFileWrite) {
  // The control: without these, the replay test below could not fail.
  int spawn = RunConfined([] { return fork() >= 0 ? 0 : 3; });
  if (WIFEXITED(spawn) && WEXITSTATUS(spawn) == kSkip) GTEST_SKIP() << "seccomp is not available";
  EXPECT_TRUE(WIFSIGNALED(spawn) && WTERMSIG(spawn) == SIGSYS) << spawn;
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/written";
  int write = RunConfined([&path] { return open(path.c_str(), O_WRONLY | O_CREAT, 0600) >= 0 ? 0 : 3; });
  EXPECT_TRUE(WIFSIGNALED(write) && WTERMSIG(write) == SIGSYS) << write;
  int read = RunConfined([] { return open("/proc/self/status", O_RDONLY) >= 0 ? 0 : 3; });
  EXPECT_TRUE(WIFEXITED(read) && WEXITSTATUS(read) == 0) << read;
}

TEST(ReplayNoSideEffectsTest, ReplayStartsNoProcessAndWritesNoFile) {
  // Every fixture, including the good run whose recording ran test.run (a process) and patch.apply
  // (a file write), and whose run_start names a workspace that does not exist.
  for (const char* file : {"good.jsonl", "escape.jsonl", "max_tool_calls.jsonl", "tests_fail.jsonl"}) {
    TraceSet set = LoadTestdata(file);
    ASSERT_EQ((*set.runs[0].start)["workspace"], "/nonexistent/fake-demo-workspace");
    const RunRecord& run = set.runs[0];
    int status = RunConfined([&run] {
      absl::StatusOr<ReplayReport> r = Replay(run);
      return r.ok() && r->match() && r->results_served == r->recorded_steps ? 0 : 1;
    });
    if (WIFEXITED(status) && WEXITSTATUS(status) == kSkip) GTEST_SKIP() << "seccomp is not available";
    EXPECT_TRUE(WIFEXITED(status)) << file << ": killed by signal " << WTERMSIG(status)
                                   << " (SIGSYS: the replay tried to start a process or write)";
    EXPECT_EQ(WEXITSTATUS(status), 0) << file << ": the confined replay did not match";
  }
}

}  // namespace
}  // namespace agent::observe
