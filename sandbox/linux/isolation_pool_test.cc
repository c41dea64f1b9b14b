// IsolationPool: each run's isolated process is prepared ahead of it (zygote.h). These proofs show
// that a run through the pool is isolated as RunIsolated's is, and that nothing of one run reaches
// the next: every seed has its own namespaces and cgroup. Controls show each proof can fail.
#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"
#include "sandbox/linux/helper_path.h"
#include "sandbox/linux/isolation_test_util.h"

namespace sandbox {
namespace {

std::string Helper() { return HardeningHelperPath(); }

class IsolationPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workspace_ = MakeWorkspace("pool");
    for (const LayerStatus& s : ProbeLayers()) {
      if (!s.available) missing_.insert(s.layer);
    }
  }

  IsolationOptions All() {
    IsolationOptions o = IsolationOptions::AllLayers();
    o.workspace = workspace_;
    return o;
  }

  RunRequest Request(std::vector<std::string> argv) {
    RunRequest r;
    r.argv = std::move(argv);
    r.cwd = workspace_;
    r.wall_timeout = absl::Seconds(20);
    r.kill_grace = absl::Milliseconds(300);
    r.env = DefaultEnvironment(r.cwd);
    (*r.env)["ASAN_OPTIONS"] = "detect_leaks=0";  // See isolation_linux_test.
    return r;
  }


  std::string workspace_;
  std::set<Layer> missing_;
};

TEST_F(IsolationPoolTest, RunsACommandWithEveryLayerListed) {
  IsolationPool pool(All());
  for (int i = 0; i < 3; ++i) {  // The first seed is prepared on the run's path, the next ones ahead.
    absl::StatusOr<RunResult> res = pool.Run(Request({"/bin/sh", "-c", "echo out; echo err >&2; exit 7"}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(res->exit_code, 7);
    EXPECT_EQ(res->out.data, "out\n");
    EXPECT_EQ(res->err.data, "err\n");
    for (Layer layer : AllLayers()) {
      if (missing_.count(layer)) continue;
      EXPECT_TRUE(Has(res->layers_in_force, LayerName(layer)))
          << LayerName(layer) << " missing from " << absl::StrJoin(res->layers_in_force, ",");
    }
    EXPECT_EQ(res->layers_unavailable.size(), missing_.size());
    pool.WaitIdle();
  }
}

// The command starts with every signal at its default and none blocked, whatever the runner had:
// here the runner ignores SIGUSR2 and SIGPIPE and blocks SIGUSR1 while the pool forks its seeds, and
// the seed itself ignores SIGTERM, SIGINT, SIGHUP and SIGQUIT as the waiter. A command that inherited
// an ignored SIGPIPE would loop on EPIPE; one that inherited a blocked signal could not be stopped.
TEST_F(IsolationPoolTest, TheCommandStartsWithDefaultSignalsAndAnEmptyMask) {
  struct sigaction ignore = {}, old_usr2 = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGUSR2, &ignore, &old_usr2), 0);
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &old_pipe), 0);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);
  for (bool all_layers : {true, false}) {
    // All layers: the seed is pid 1 of its namespace. Only the reaper: a subreaper seed.
    IsolationPool pool(all_layers ? All() : [&] {
      IsolationOptions o;
      o.enabled = {Layer::kReaper};
      o.workspace = workspace_;
      return o;
    }());
    for (int i = 0; i < 2; ++i) {  // The first seed on the run's path, the second prepared ahead.
      absl::StatusOr<RunResult> res =
          pool.Run(Request({"/bin/sh", "-c", "grep -E '^Sig(Ign|Blk):' /proc/self/status"}));
      ASSERT_TRUE(res.ok()) << res.status();
      EXPECT_EQ(res->out.data, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n")
          << (all_layers ? "all layers" : "reaper only") << ", run " << i;
      pool.WaitIdle();
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGUSR2, &old_usr2, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
}

TEST_F(IsolationPoolTest, AFileARunWritesToItsPrivateTmpIsNotVisibleToTheNextRun) {
  SKIP_UNLESS_LAYERS(Layer::kUserNs, Layer::kMountNs);
  IsolationPool pool(All());
  const std::string marker = absl::StrCat("/tmp/pool-marker-", getpid());
  // Control: within one run the file is there, so the check below can see it.
  absl::StatusOr<RunResult> first =
      pool.Run(Request({"/bin/sh", "-c", absl::StrCat("echo x > ", marker, " && test -e ", marker)}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->exit_code, 0) << first->err.data;
  absl::StatusOr<RunResult> second = pool.Run(Request({"/bin/sh", "-c", absl::StrCat("test -e ", marker)}));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->exit_code, 1) << "the next run saw the previous run's /tmp file";
  struct stat st;
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "the private /tmp file reached the host";
}

TEST_F(IsolationPoolTest, AProcessARunLeavesBehindIsGoneBeforeTheNextRunStarts) {
  IsolationPool pool(All());
  const std::string token = absl::StrCat("1000.", getpid(), "7");
  absl::StatusOr<RunResult> first = pool.Run(Request({Helper(), "daemon", token}));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->exit_code, 0);
  std::vector<pid_t> left = FindProcesses(token);
  EXPECT_TRUE(left.empty()) << "the daemon outlived its run";
  for (pid_t pid : left) kill(pid, SIGKILL);
  if (missing_.count(Layer::kPidNs) || missing_.count(Layer::kMountNs)) return;
  // The next run's /proc shows its own processes only: its seed (pid 1), the shell, ls and grep.
  absl::StatusOr<RunResult> second =
      pool.Run(Request({"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'"}));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_LE(std::atoi(second->out.data.c_str()), 4) << second->out.data;
}

TEST_F(IsolationPoolTest, EveryRunHasItsOwnPidsMax) {
  SKIP_UNLESS_LAYERS(Layer::kCgroup);
  IsolationOptions o = All();
  o.pids = 32;
  IsolationPool pool(o);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RunResult> res = pool.Run(Request({Helper(), "forkbomb", "500"}));
    ASSERT_TRUE(res.ok()) << res.status();
    int forked = -1;
    ASSERT_EQ(sscanf(res->out.data.c_str(), "forked %d", &forked), 1) << res->out.data;
    EXPECT_LT(forked, 32) << "run " << i;
    // A cgroup shared with the previous run would leave no room: each run gets its own.
    EXPECT_GT(forked, 10) << "run " << i;
    EXPECT_TRUE(Has(res->limits_in_force, "cgroup.pids=32"));
  }
}

TEST_F(IsolationPoolTest, ASysVSegmentARunCreatesIsNotVisibleToTheNextRun) {
  SKIP_UNLESS_LAYERS(Layer::kUserNs, Layer::kIpcNs);
  if (access("/usr/bin/ipcmk", X_OK) != 0) GTEST_SKIP() << "no ipcmk";
  IsolationPool pool(All());
  // Control: within one run the segment is listed.
  absl::StatusOr<RunResult> first =
      pool.Run(Request({"/bin/sh", "-c", "ipcmk -M 4096 >/dev/null && ipcs -m | grep -c '^0x'"}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->out.data, "1\n") << first->err.data;
  absl::StatusOr<RunResult> second = pool.Run(Request({"/bin/sh", "-c", "ipcs -m | grep -c '^0x'"}));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->out.data, "0\n") << "the next run saw the previous run's SysV segment";
}

TEST_F(IsolationPoolTest, ProofsOfTheLayersHoldThroughThePool) {
  IsolationPool pool(All());
  if (!missing_.count(Layer::kLandlock) || !missing_.count(Layer::kMountNs)) {
    const std::string outside = absl::StrCat("/var/tmp/pool-outside-", getpid());
    absl::StatusOr<RunResult> res = pool.Run(Request({"/bin/sh", "-c", absl::StrCat("echo x > ", outside)}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_NE(res->exit_code, 0);
    struct stat st;
    EXPECT_NE(stat(outside.c_str(), &st), 0) << "a write outside the workspace reached the host";
    unlink(outside.c_str());
  }
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  absl::StatusOr<RunResult> connect = pool.Run(Request({Helper(), "connect", absl::StrCat(ntohs(addr.sin_port))}));
  ASSERT_TRUE(connect.ok()) << connect.status();
  EXPECT_EQ(connect->exit_code, 1) << connect->out.data;
  close(listener);
  if (!missing_.count(Layer::kSeccomp)) {
    for (const char* call : {"ptrace", "mount", "unshare", "keyctl", "io_uring_setup", "tiocsti"}) {
      absl::StatusOr<RunResult> res = pool.Run(Request({Helper(), "deny", call}));
      ASSERT_TRUE(res.ok()) << res.status();
      EXPECT_EQ(res->exit_code, 0) << call << ": " << res->out.data << res->err.data;
    }
  }
}

// The seed applies the capability drop, no_new_privs and Landlock to itself before each run, so
// they must show in the command itself, in the first pooled run and in one prepared while the
// first ran. (Listing them in layers_in_force proves nothing; the mount namespace's read-only root
// also stops a write outside, so Landlock gets a pool of its own below.)
TEST_F(IsolationPoolTest, TheCommandRunsWithoutCapabilitiesAndWithNoNewPrivs) {
  SKIP_UNLESS_LAYERS(Layer::kCapabilities, Layer::kNoNewPrivs);
  IsolationPool pool(All());
  for (int run = 1; run <= 2; ++run) {
    absl::StatusOr<RunResult> res = pool.Run(
        Request({"/bin/sh", "-c", "grep -E '^(CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status"}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(res->exit_code, 0) << res->err.data;
    EXPECT_EQ(res->out.data,
              "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"
              "NoNewPrivs:\t1\n")
        << "run " << run;
  }
}

TEST_F(IsolationPoolTest, LandlockAloneStopsAWriteOutsideTheWorkspace) {
  SKIP_UNLESS_LAYERS(Layer::kLandlock);
  IsolationOptions o;
  o.enabled = {Layer::kLandlock};
  o.workspace = workspace_;
  IsolationPool pool(o);
  const std::string outside = absl::StrCat("/var/tmp/pool-landlock-", getpid());
  for (int run = 1; run <= 2; ++run) {
    absl::StatusOr<RunResult> res =
        pool.Run(Request({"/bin/sh", "-c", absl::StrCat("echo x > ", outside)}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_NE(res->exit_code, 0) << "run " << run;
    struct stat st;
    EXPECT_NE(stat(outside.c_str(), &st), 0) << "run " << run << ": the write reached the host";
    unlink(outside.c_str());
    absl::StatusOr<RunResult> inside = pool.Run(Request({"/bin/sh", "-c", "echo x > inside.txt"}));
    ASSERT_TRUE(inside.ok()) << inside.status();
    EXPECT_EQ(inside->exit_code, 0) << "the workspace itself stays writable: " << inside->err.data;
  }
}

// A pooled run's command gets its rlimits from the seed, not from the per-run child setup: they
// must be the request's, exactly as RunIsolated applies them (layers_in_force lists the request's
// limits either way, so only the command's own /proc/self/limits can tell).
TEST_F(IsolationPoolTest, TheCommandHasTheRequestsRlimits) {
  RunRequest r = Request({"/bin/grep", "-E", "^Max (cpu time|file size|open files|core file size)",
                          "/proc/self/limits"});
  r.limits.cpu_seconds = 7;
  r.limits.file_size_bytes = 1 << 20;
  r.limits.open_files = 77;
  absl::StatusOr<RunResult> direct = RunIsolated(r, All());
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_EQ(direct->exit_code, 0) << direct->err.data;
  EXPECT_TRUE(absl::StrContains(direct->out.data, "Max open files            77")) << direct->out.data;
  IsolationPool pool(All());
  for (int run = 1; run <= 2; ++run) {
    absl::StatusOr<RunResult> pooled = pool.Run(r);
    ASSERT_TRUE(pooled.ok()) << pooled.status();
    EXPECT_EQ(pooled->out.data, direct->out.data) << "run " << run;
  }
}

// The seed prepared for the next run holds a process (and, in a pid namespace, a whole tree):
// destroying the pool must end and reap it, or every agent session leaks one.
TEST_F(IsolationPoolTest, DestroyingThePoolEndsThePreparedSeed) {
  const std::set<pid_t> before = OurChildren();
  {
    IsolationPool pool(All());
    absl::StatusOr<RunResult> res = pool.Run(Request({"/bin/true"}));
    ASSERT_TRUE(res.ok()) << res.status();
    pool.WaitIdle();
    EXPECT_GT(OurChildren().size(), before.size()) << "no seed was prepared for the next run";
  }
  EXPECT_EQ(OurChildren(), before) << "a seed outlived its pool";
}

TEST_F(IsolationPoolTest, MemoryHogIsKilledAndTheResultSaysSo) {
  SKIP_UNLESS_LAYERS(Layer::kCgroup);
  IsolationOptions o = All();
  o.memory_bytes = 64 << 20;
  IsolationPool pool(o);
  absl::StatusOr<RunResult> res = pool.Run(Request({Helper(), "memhog", "1024"}));
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->term_signal, SIGKILL) << res->out.data;
  EXPECT_TRUE(res->memory_limit_killed);
}

TEST_F(IsolationPoolTest, TheCommandsSignalAndTimeoutReachTheResult) {
  IsolationPool pool(All());
  absl::StatusOr<RunResult> killed = pool.Run(Request({"/bin/sh", "-c", "kill -SEGV $$"}));
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->term_signal, SIGSEGV);
  RunRequest slow = Request({"/bin/sh", "-c", "trap '' TERM; sleep 100"});
  slow.wall_timeout = absl::Milliseconds(300);
  absl::StatusOr<RunResult> timed = pool.Run(slow);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_TRUE(timed->timed_out);
  EXPECT_TRUE(timed->term_signal.has_value());
}

// Without a pid namespace the seed is a subreaper waiter: the timeout's SIGKILL goes to the
// command's group, so the seed survives it and sweeps the setsid daemon it adopted.
TEST_F(IsolationPoolTest, WithOnlyTheReaperADaemonIsGoneAfterATimeout) {
  SKIP_UNLESS_LAYERS(Layer::kReaper);
  IsolationOptions o;
  o.workspace = workspace_;
  o.enabled = {Layer::kReaper};
  IsolationPool pool(o);
  const std::string token = absl::StrCat("1000.", getpid(), "98");
  RunRequest r = Request({"/bin/sh", "-c",
                          absl::StrCat("trap '' TERM; ", Helper(), " daemon ", token, "; while :; do sleep 0.05; done")});
  r.wall_timeout = absl::Milliseconds(500);
  r.kill_grace = absl::Milliseconds(200);
  absl::StatusOr<RunResult> res = pool.Run(r);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_TRUE(Has(res->layers_in_force, "reaper(subreaper_waiter)"));
  EXPECT_TRUE(res->timed_out);
  EXPECT_EQ(res->term_signal, SIGKILL);
  std::vector<pid_t> left = FindProcesses(token);
  EXPECT_TRUE(left.empty()) << "the daemon escaped the timeout";
  for (pid_t pid : left) kill(pid, SIGKILL);
}

TEST_F(IsolationPoolTest, ConcurrentRunsEachGetTheirOwnSeed) {
  IsolationPool pool(All());
  // Four runs at once, each waiting for the others to start (a file per run in the shared
  // workspace): they would deadlock if a run waited for another to end before getting a seed.
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<RunResult>> results(4, absl::UnknownError("not run"));
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      RunRequest r = Request({"/bin/sh", "-c",
                              absl::StrCat("touch started.", i, "; n=0; while [ $(ls started.* | wc -l) -lt 4 ]; do ",
                                           "sleep 0.02; n=$((n+1)); [ $n -gt 400 ] && exit 3; done; exit 0")});
      results[i] = pool.Run(r);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(results[i]->exit_code, 0) << "run " << i << " never saw the others start";
  }
}

TEST_F(IsolationPoolTest, AFailedExecIsAnErrorNamingTheStep) {
  IsolationPool pool(All());
  const std::string bad = absl::StrCat(workspace_, "/not-a-program");
  std::ofstream(bad) << "\x7f" << "garbage";
  chmod(bad.c_str(), 0755);
  absl::StatusOr<RunResult> res = pool.Run(Request({bad}));
  EXPECT_FALSE(res.ok());
  EXPECT_TRUE(absl::StrContains(res.status().message(), "exec failed")) << res.status();
  // The pool recovers: the next run works.
  absl::StatusOr<RunResult> next = pool.Run(Request({"/bin/true"}));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->exit_code, 0);
}

TEST_F(IsolationPoolTest, ARequiredLayerThatCannotApplyFailsClosed) {
  IsolationOptions o;
  o.workspace = workspace_;
  o.allow_network = true;
  o.required = {Layer::kNetNs};  // A net namespace contradicts an allowed network.
  IsolationPool pool(o);
  absl::StatusOr<RunResult> res = pool.Run(Request({"/bin/true"}));
  EXPECT_EQ(CodeOf(res.status()), ErrorCode::kEUNSUPPORTED) << res.status();
}

TEST_F(IsolationPoolTest, AnotherWorkspaceTakesThePerRunPathWithTheSameIsolation) {
  IsolationOptions o = IsolationOptions::AllLayers();  // No fixed workspace: the first run's cwd.
  IsolationPool pool(o);
  absl::StatusOr<RunResult> first = pool.Run(Request({"/bin/true"}));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(Has(first->layers_in_force, "prepared_seed"));
  RunRequest other = Request({"/bin/sh", "-c", "echo x > ./f"});
  other.cwd = MakeWorkspace("pool");
  absl::StatusOr<RunResult> second = pool.Run(other);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->exit_code, 0) << "the other workspace must be writable: " << second->err.data;
  EXPECT_FALSE(Has(second->layers_in_force, "prepared_seed"));
}

}  // namespace
}  // namespace sandbox
