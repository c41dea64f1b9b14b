// Red-team group `process`: processes that outlive, outgrow or outwit the runner
// (sandbox/runner.h). Each case reproduces one incident from the seed's runner matrix (13.4.5) or from
// the kernel-layers issue. Every case is bounded: the fork bomb has a fixed depth, hogs run for about
// a second, and a case whose incident is a hang kills what it started (run_testing.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "redteam/run_testing.h"
#include "redteam/testing.h"
#include "sandbox/errors.h"
#include "sandbox/runner.h"

namespace redteam {
namespace {

class ProcessTest : public ::testing::Test {
 protected:
  void TearDown() override { KillProcessesWithMarker(marker_); }

  sandbox::RunRequest Shell(const std::string& script) {
    return ShellRequest(dir_.path(), script, marker_);
  }
  sandbox::RunRequest Argv(std::vector<std::string> argv) {
    sandbox::RunRequest request;
    request.argv = std::move(argv);
    request.cwd = dir_.path();
    request.wall_timeout = absl::Seconds(10);
    request.kill_grace = absl::Milliseconds(500);
    return request;
  }
  sandbox::RunResult MustRun(const sandbox::RunRequest& request,
                             const std::vector<std::string>& pid_files = {}) {
    RescuedRun run = RunWithRescue(request, absl::Seconds(30), pid_files, marker_);
    EXPECT_FALSE(run.hung) << "Run did not return; the case had to kill its processes";
    EXPECT_TRUE(run.result.ok()) << run.result.status();
    return run.result.ok() ? *std::move(run.result) : sandbox::RunResult{};
  }
  // True when the kernel layers that can reach a process outside the group (child subreaper, pidfd,
  // cgroup, pid namespace) were in force for `r`.
  static bool KernelReapingInForce(const sandbox::RunResult& r) {
    return std::any_of(r.layers_in_force.begin(), r.layers_in_force.end(), [](const std::string& l) {
      return l.find("reaper") != std::string::npos || l.find("cgroup") != std::string::npos ||
             l.find("pid") != std::string::npos;
    });
  }
  static std::string Layers(const sandbox::RunResult& r) {
    std::string all;
    for (const std::string& l : r.layers_in_force) all += l + " ";
    return all;
  }

  ScratchDir dir_{"process"};
  std::string marker_ = UniqueMarker("process");
};

// Incident: `sleep 100` in a test hung the agent: RLIMIT_CPU does not count sleeping (seed 13.4.2),
// only a wall-clock timeout ends it.
TEST_F(ProcessTest, SleepPastTheWallTimeoutIsKilled) {
  sandbox::RunRequest request = Argv({"/bin/sleep", "60"});
  request.wall_timeout = absl::Milliseconds(500);
  sandbox::RunResult r = MustRun(request);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exit_code.has_value());
  EXPECT_TRUE(r.term_signal == SIGTERM || r.term_signal == SIGKILL) << r.term_signal.value_or(0);
  EXPECT_TRUE(ProcessGone(r.pid));
}

// Incident: the timeout killed the shell but not its children (seed 13.4.3: no process group).
TEST_F(ProcessTest, TimeoutKillsTheWholeProcessGroup) {
  sandbox::RunRequest request =
      Shell("sleep 60 & echo $! > a.pid; sleep 60 & echo $! > b.pid; wait");
  request.wall_timeout = absl::Milliseconds(700);
  sandbox::RunResult r = MustRun(request, {dir_.Join("a.pid"), dir_.Join("b.pid")});
  EXPECT_TRUE(r.timed_out);
  for (const char* file : {"a.pid", "b.pid"}) {
    std::optional<pid_t> pid = AwaitPidFile(dir_.Join(file));
    ASSERT_TRUE(pid.has_value());
    EXPECT_TRUE(ProcessGone(*pid)) << file;
  }
  EXPECT_TRUE(LiveProcessesInGroup(r.pgid).empty());
}

// Incident: a grandchild that ignores SIGTERM survived the "polite" kill; the grace period must end
// with SIGKILL to the group.
TEST_F(ProcessTest, GrandchildIgnoringSigtermIsKilledAfterTheGrace) {
  sandbox::RunRequest request = Shell("trap '' TERM; sleep 60 & echo $! > g.pid; wait; wait");
  request.wall_timeout = absl::Milliseconds(500);
  request.kill_grace = absl::Milliseconds(300);
  sandbox::RunResult r = MustRun(request, {dir_.Join("g.pid")});
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL) << "the shell ignores SIGTERM: only SIGKILL can end it";
  std::optional<pid_t> grandchild = AwaitPidFile(dir_.Join("g.pid"));
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_TRUE(ProcessGone(*grandchild));
  EXPECT_TRUE(LiveProcessesInGroup(r.pgid).empty());
}

// Incident / decision (README "setsid daemon"): a double fork plus setsid leaves the process group,
// so killpg cannot reach it. The portable runner cannot kill it: this case asserts that gap where only
// the portable layers ran, and asserts the daemon is gone where the kernel layers (subreaper + pidfd,
// cgroup, pid namespace) were in force. Plain sandbox::Run is the portable runner on every build; the
// kernel-layer closure through RunIsolated is HardeningTest.SetsidDaemonIsGoneWhenRunReturns.
TEST_F(ProcessTest, SetsidDaemonEscapesThePortableRunnerOnly) {
  sandbox::RunRequest request = Shell(
      "setsid sh -c 'echo $$ > daemon.pid; while :; do sleep 0.1; done' \"$0\" "
      "</dev/null >/dev/null 2>&1 & "
      "while [ ! -s daemon.pid ]; do sleep 0.01; done; exit 0");
  sandbox::RunResult r = MustRun(request, {dir_.Join("daemon.pid")});
  EXPECT_EQ(r.exit_code, 0);
  std::optional<pid_t> daemon = AwaitPidFile(dir_.Join("daemon.pid"));
  ASSERT_TRUE(daemon.has_value());
  if (KernelReapingInForce(r)) {
    EXPECT_TRUE(ProcessGone(*daemon)) << "layers in force: " << Layers(r);
  } else {
    EXPECT_FALSE(ProcessGone(*daemon))
        << "documented gap: the portable runner cannot reach a setsid daemon; if it now can, "
           "update this case and README.md. Layers: "
        << Layers(r);
    RecordProperty("portable_gap", "setsid daemon survived Run (expected without kernel layers)");
  }
  kill(*daemon, SIGKILL);
}

// Incident: a setsid daemon kept the stdout pipe open, and a runner waiting for EOF never returned.
// Whatever can or cannot be killed, Run must return by the wall timeout.
TEST_F(ProcessTest, SetsidDaemonHoldingStdoutCannotHangRun) {
  sandbox::RunRequest request = Shell(
      "setsid sh -c 'echo $$ > daemon.pid; while :; do sleep 0.1; done' \"$0\" & "
      "while [ ! -s daemon.pid ]; do sleep 0.01; done; echo started");
  request.wall_timeout = absl::Seconds(2);
  RescuedRun run = RunWithRescue(request, absl::Seconds(15), {dir_.Join("daemon.pid")}, marker_);
  EXPECT_FALSE(run.hung) << "Run waited for EOF on a pipe held by a daemon outside its group";
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_TRUE(run.result->out.data.starts_with("started")) << run.result->out.data;
  std::optional<pid_t> daemon = AwaitPidFile(dir_.Join("daemon.pid"));
  ASSERT_TRUE(daemon.has_value());
  if (KernelReapingInForce(*run.result)) {
    EXPECT_TRUE(ProcessGone(*daemon));
  }
  kill(*daemon, SIGKILL);
}

// Incident / decision (README "fork bomb as root"): a fork bomb spread over many processes. We run as
// root, and RLIMIT_NPROC does not bind a process with CAP_SYS_RESOURCE or CAP_SYS_ADMIN, so the
// `processes` limit is not what contains it: the wall timeout and the kill of the whole process group
// are (plus pids.max once the kernel layers run the command in a cgroup). The bomb here is bounded
// (depth 5: 63 shells and 63 sleeps), safe on a 2-core machine, and must be gone after Run.
TEST_F(ProcessTest, BoundedForkBombIsContainedAndGoneAfterRun) {
  sandbox::RunRequest request = Shell(
      "f() { if [ \"$1\" -gt 0 ]; then f $(($1 - 1)) & f $(($1 - 1)) & fi; sleep 60; }; f 5");
  request.wall_timeout = absl::Milliseconds(1500);
  request.limits.processes = 16;
  std::atomic<bool> stop{false};
  std::atomic<int> peak{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      const int now = static_cast<int>(ProcessesWithMarker(marker_).size());
      peak = std::max(peak.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  sandbox::RunResult r = MustRun(request);
  stop = true;
  watcher.join();
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(LiveProcessesInGroup(r.pgid).empty()) << "bomb processes survived the group kill";
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty());
  RecordProperty("peak_bomb_shells", peak.load());
  RecordProperty("euid", static_cast<int>(geteuid()));
  if (geteuid() != 0 && !KernelReapingInForce(r)) {
    EXPECT_LE(peak.load(), 16) << "RLIMIT_NPROC binds a non-root user";
  }
}

// Incident: an infinite loop in a test burned CPU until the wall timeout; RLIMIT_CPU ends it sooner
// with SIGXCPU (soft limit), and the result says it was a signal, not a timeout.
TEST_F(ProcessTest, CpuHogIsStoppedByRlimitCpu) {
  sandbox::RunRequest request = Shell("while :; do :; done");
  request.limits.cpu_seconds = 1;
  request.wall_timeout = absl::Seconds(20);
  sandbox::RunResult r = MustRun(request);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.term_signal == SIGXCPU || r.term_signal == SIGKILL) << r.term_signal.value_or(0);
  // It burned CPU until the limit. Not ">= 1 s": the kernel enforces RLIMIT_CPU on the precise
  // runtime, while rusage's user/system times are tick samples scaled to it, and under load they
  // have read as low as 874 ms for a process the 1 s limit ended.
  EXPECT_GE(r.user_cpu + r.system_cpu, absl::Milliseconds(500));
}

// Incident: with no CPU limit configured, a CPU hog must still end at the wall timeout.
TEST_F(ProcessTest, CpuHogWithoutCpuLimitEndsAtTheWallTimeout) {
  sandbox::RunRequest request = Shell("while :; do :; done");
  request.limits.cpu_seconds.reset();
  request.wall_timeout = absl::Milliseconds(800);
  sandbox::RunResult r = MustRun(request);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.term_signal.has_value());
}

// Incident: RLIMIT_CPU was mistaken for a wall clock (seed 13.4.2): a sleeping command under a one
// second CPU limit must finish normally.
TEST_F(ProcessTest, SleeperIsNotKilledByTheCpuLimit) {
  sandbox::RunRequest request = Argv({"/bin/sleep", "1.2"});
  request.limits.cpu_seconds = 1;
  sandbox::RunResult r = MustRun(request);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.term_signal.has_value());
  EXPECT_FALSE(r.timed_out);
}

// Incident: a test opened descriptors until none were left; the limit must bind the child, and the
// runner (whose own descriptors are separate) must keep working afterwards.
TEST_F(ProcessTest, FdExhaustionInTheChildFailsOnlyTheChild) {
  sandbox::RunRequest request = Argv(
      {"/bin/bash", "-c",
       "for i in $(seq 3 200); do eval \"exec $i</dev/null\" || { echo stopped at $i; exit 7; }; "
       "done; echo never"});
  request.limits.open_files = 32;
  sandbox::RunResult r = MustRun(request);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out.data.find("never"), std::string::npos);
  const size_t at = r.out.data.find("stopped at ");
  ASSERT_NE(at, std::string::npos) << r.out.data << r.err.data;
  EXPECT_LE(std::atoi(r.out.data.c_str() + at + 11), 32) << "RLIMIT_NOFILE=32 did not bind";
  sandbox::RunResult after = MustRun(Argv({"/bin/true"}));
  EXPECT_EQ(after.exit_code, 0);
}

// Incident: every Run leaked a pipe end; after a few thousand test runs the agent hit EMFILE.
TEST_F(ProcessTest, RunnerLeaksNoDescriptorsAcrossManyRuns) {
  MustRun(Argv({"/bin/true"}));  // Warm up anything created once (e.g. a signal pipe).
  const int before = CountOpenFds();
  for (int i = 0; i < 20; ++i) {
    MustRun(Argv({"/bin/true"}));
    sandbox::RunRequest timeout = Argv({"/bin/sleep", "5"});
    timeout.wall_timeout = absl::Milliseconds(20);
    MustRun(timeout);
    EXPECT_FALSE(sandbox::Run(Argv({"/nonexistent/redteam"})).ok());
  }
  EXPECT_EQ(CountOpenFds(), before);
}

// Incident: a missing test binary surfaced as "exit status 127" and the agent "fixed" the code.
TEST_F(ProcessTest, MissingBinaryIsEnoentNotExit127) {
  absl::StatusOr<sandbox::RunResult> absolute = sandbox::Run(Argv({"/nonexistent/redteam-bin"}));
  EXPECT_EQ(CodeName(absolute), "ENOENT");
  EXPECT_NE(absolute.status().message().find("No such file"), std::string::npos)
      << absolute.status();
  absl::StatusOr<sandbox::RunResult> on_path = sandbox::Run(Argv({"redteam-no-such-command"}));
  EXPECT_EQ(CodeName(on_path), "ENOENT") << on_path.status();
}

// Incident: a test script checked in without its execute bit failed as a mysterious exit status.
TEST_F(ProcessTest, NonExecutableFileIsEpermWithTheReason) {
  ASSERT_TRUE(WriteFile(dir_.Join("script.sh"), "#!/bin/sh\necho hi\n"));
  ASSERT_EQ(chmod(dir_.Join("script.sh").c_str(), 0644), 0);
  absl::StatusOr<sandbox::RunResult> r = sandbox::Run(Argv({dir_.Join("script.sh")}));
  EXPECT_EQ(CodeName(r), "EPERM") << r.status();
}

// Incident: the agent's open descriptor to a secret leaked into the test command (no close-on-exec),
// which read it through /proc/self/fd.
TEST_F(ProcessTest, InheritedDescriptorsAreClosed) {
  ASSERT_TRUE(WriteFile(dir_.Join("secret.txt"), "SECRET"));
  const int fd = open(dir_.Join("secret.txt").c_str(), O_RDONLY);  // No O_CLOEXEC, on purpose.
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, 57), 57);
  sandbox::RunResult r = MustRun(Shell("ls /proc/$$/fd; cat <&57"));
  close(57);
  close(fd);
  std::set<std::string> fds;
  std::istringstream lines(r.out.data);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) fds.insert(line);
  }
  EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2"})) << r.out.data;
  EXPECT_EQ(r.out.data.find("SECRET"), std::string::npos);
  EXPECT_NE(r.exit_code, 0) << "reading fd 57 must fail in the child";
}

// Incident: an API token in the agent's environment was printed by a test's `env` dump.
TEST_F(ProcessTest, ParentEnvironmentDoesNotLeak) {
  ASSERT_EQ(setenv("REDTEAM_LEAKED_TOKEN", "tok-123", 1), 0);
  sandbox::RunResult r = MustRun(Argv({"/usr/bin/env"}));
  unsetenv("REDTEAM_LEAKED_TOKEN");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.data.find("REDTEAM_LEAKED_TOKEN"), std::string::npos) << r.out.data;
  EXPECT_NE(r.out.data.find("PATH="), std::string::npos) << "the minimal default keeps PATH";
}

// Incident: a test that read stdin blocked on the agent's terminal; stdin must be /dev/null by default.
TEST_F(ProcessTest, StdinIsDevNullByDefault) {
  sandbox::RunRequest request = Argv({"/bin/cat"});
  request.wall_timeout = absl::Seconds(5);
  sandbox::RunResult r = MustRun(request);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.data, "");
}

// Incident: writing 4 MB of stdin before reading stdout deadlocked once both pipes were full.
TEST_F(ProcessTest, LargeStdinEchoedBackDoesNotDeadlock) {
  std::string input;
  for (int i = 0; input.size() < (4u << 20); ++i) input += "line " + std::to_string(i) + "\n";
  sandbox::RunRequest request = Argv({"/bin/cat"});
  request.stdin_data = input;
  request.stdout_cap = 8 << 20;
  sandbox::RunResult r = MustRun(request);
  EXPECT_FALSE(r.timed_out) << "a stdin/stdout deadlock ends in the timeout";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.data, input);
}

// Incident: the child shared the agent's process group, so killpg on timeout killed the agent too.
TEST_F(ProcessTest, ChildLeadsItsOwnSessionAndGroup) {
  sandbox::RunResult r = MustRun(Shell("cat /proc/$$/stat"));
  ASSERT_EQ(r.exit_code, 0);
  const size_t paren = r.out.data.rfind(')');
  ASSERT_NE(paren, std::string::npos) << r.out.data;
  std::istringstream fields(r.out.data.substr(paren + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0;
  fields >> state >> ppid >> pgrp >> session;
  EXPECT_EQ(pgrp, r.pid);
  EXPECT_EQ(session, r.pid);
  EXPECT_EQ(r.pgid, r.pid);
  EXPECT_NE(r.pgid, getpgrp());
}

// Incident: a crash (signal) was reported as "exit code 0" because only WEXITSTATUS was read.
TEST_F(ProcessTest, SignalDeathIsNotReportedAsAnExitCode) {
  sandbox::RunResult killed = MustRun(Shell("kill -SEGV $$"));
  EXPECT_EQ(killed.term_signal, SIGSEGV);
  EXPECT_FALSE(killed.exit_code.has_value());
  EXPECT_FALSE(killed.timed_out);
  sandbox::RunResult exited = MustRun(Shell("exit 3"));
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_FALSE(exited.term_signal.has_value());
}

// Incident: a crashing test wrote a 2 GB core file into the workspace; RLIMIT_CORE is always 0.
TEST_F(ProcessTest, CoreDumpsAreDisabled) {
  sandbox::RunResult r = MustRun(Shell("ulimit -c"));
  EXPECT_EQ(r.out.data, "0\n");
}

// Incident: the runner was not reentrant: two agents running tests at once swapped their outputs.
TEST_F(ProcessTest, ConcurrentRunsKeepTheirOutputsApart) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::string token = "t" + std::to_string(t) + "-" + std::to_string(i);
        absl::StatusOr<sandbox::RunResult> r =
            sandbox::Run(ShellRequest(dir_.path(), "echo " + token + "; echo " + token + " >&2"));
        if (!r.ok() || r->out.data != token + "\n" || r->err.data != token + "\n") ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Incident: timed-out children were never waited for and zombies piled up in the agent.
TEST_F(ProcessTest, ChildIsReapedNoZombieLeft) {
  sandbox::RunRequest request = Argv({"/bin/sleep", "30"});
  request.wall_timeout = absl::Milliseconds(200);
  sandbox::RunResult r = MustRun(request);
  ASSERT_GT(r.pid, 0);
  errno = 0;
  EXPECT_EQ(waitpid(r.pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "the child is still ours to reap: Run left a zombie";
  EXPECT_TRUE(ProcessGone(r.pid));
}

// Incident: a relative or missing working directory ran the test in the agent's own directory.
TEST_F(ProcessTest, BadWorkingDirectoryIsAnErrorNotTheAgentsCwd) {
  sandbox::RunRequest relative = Argv({"/bin/pwd"});
  relative.cwd = "relative/dir";
  EXPECT_EQ(CodeName(sandbox::Run(relative)), "EINVAL");
  sandbox::RunRequest missing = Argv({"/bin/pwd"});
  missing.cwd = dir_.Join("missing");
  absl::StatusOr<sandbox::RunResult> r = sandbox::Run(missing);
  EXPECT_FALSE(r.ok()) << "ran in " << (r.ok() ? r->out.data : "");
  sandbox::RunRequest empty_argv = Argv({});
  EXPECT_EQ(CodeName(sandbox::Run(empty_argv)), "EINVAL");
}

}  // namespace
}  // namespace redteam
