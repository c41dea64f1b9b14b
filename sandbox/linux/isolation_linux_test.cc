// The layers inside the runner: RunIsolated applies them in the child setup, and each proof below
// runs a real command through it. Controls (the same command with no layers) show each proof can
// fail.
#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"
#include "sandbox/linux/helper_path.h"
#include "sandbox/linux/isolation_test_util.h"

namespace sandbox {
namespace {

std::string Helper() { return HardeningHelperPath(); }

RunRequest Request(std::vector<std::string> argv) {
  RunRequest r;
  r.argv = std::move(argv);
  r.cwd = MakeWorkspace("iso");
  r.wall_timeout = absl::Seconds(20);
  r.kill_grace = absl::Milliseconds(300);
  // Under --config=asan the helper is instrumented, and LeakSanitizer's exit check ptraces the
  // process, which the seccomp layer rightly refuses: leak checking is off inside the sandbox.
  r.env = DefaultEnvironment(r.cwd);
  (*r.env)["ASAN_OPTIONS"] = "detect_leaks=0";
  return r;
}

IsolationOptions Only(std::set<Layer> layers) {
  IsolationOptions o;
  o.enabled = std::move(layers);
  return o;
}

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const LayerStatus& s : ProbeLayers()) {
      if (!s.available) missing_.insert(s.layer);
    }
  }
  std::set<Layer> missing_;
};

TEST_F(IsolationTest, AllLayersRunACommandAndListThemselves) {
  RunRequest r = Request({"/bin/sh", "-c", "exit 7"});
  absl::StatusOr<RunResult> res = RunIsolated(r, IsolationOptions::AllLayers());
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->exit_code, 7);
  const std::vector<std::string>& in = res->layers_in_force;
  for (Layer layer : AllLayers()) {
    if (missing_.count(layer)) continue;
    std::string name(LayerName(layer));
    if (layer == Layer::kNetNs || layer == Layer::kMountNs || layer == Layer::kLandlock ||
        layer == Layer::kSeccomp || layer == Layer::kCgroup || layer == Layer::kReaper) {
      EXPECT_TRUE(Has(in, name)) << name << " missing from " << absl::StrJoin(in, ",");
    } else {
      EXPECT_TRUE(Has(in, name == "caps" ? "caps" : name)) << name << " missing from " << absl::StrJoin(in, ",");
    }
  }
  EXPECT_EQ(res->layers_unavailable.size(), missing_.size()) << absl::StrJoin(res->layers_unavailable, "; ");
}

TEST_F(IsolationTest, ShellWriteToTmpOutsideTheWorkspaceNeverReachesTheHost) {
  std::string outside = absl::StrCat("/tmp/iso-outside-", getpid());
  for (Layer layer : {Layer::kLandlock, Layer::kMountNs}) {
    if (missing_.count(layer)) continue;
    unlink(outside.c_str());
    IsolationOptions o = Only({layer});
    if (layer == Layer::kMountNs) o.enabled.insert(Layer::kUserNs);
    absl::StatusOr<RunResult> res = RunIsolated(Request({"/bin/sh", "-c", absl::StrCat("echo x > ", outside)}), o);
    ASSERT_TRUE(res.ok()) << res.status();
    struct stat st;
    EXPECT_NE(stat(outside.c_str(), &st), 0) << LayerName(layer) << " let the write reach the host";
    if (layer == Layer::kLandlock) {
      EXPECT_NE(res->exit_code, 0) << "Landlock should refuse the write";
    }
  }
  unlink(outside.c_str());
}

// The lines of /proc/self/mountinfo: one per mount this process sees.
int CountMounts() {
  std::ifstream in("/proc/self/mountinfo");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Incident shape: where / is a shared mount (systemd makes it so on most hosts), a mount namespace
// whose mounts are not made private first propagates every mount the sandbox makes (its private
// /tmp, the workspace, /proc) back into the host's namespace. This machine's / is private, so the
// test builds a shared world of its own: a child unshares a mount namespace, marks / rshared, runs
// the mount layer, and counts its own mounts before and after.
TEST_F(IsolationTest, MountsTheSandboxMakesDoNotPropagateToASharedHost) {
  SKIP_UNLESS_LAYERS(Layer::kMountNs);
  if (geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN) for unshare(CLONE_NEWNS) and a shared /";
  RunRequest r = Request({"/bin/true"});
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    if (unshare(CLONE_NEWNS) != 0) _exit(10);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_SHARED, nullptr) != 0) _exit(11);
    const int before = CountMounts();
    absl::StatusOr<RunResult> res = RunIsolated(r, Only({Layer::kMountNs}));
    if (!res.ok() || res->exit_code != 0) _exit(12);
    _exit(CountMounts() == before ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_NE(WEXITSTATUS(status), 10) << "unshare(CLONE_NEWNS) failed";
  EXPECT_NE(WEXITSTATUS(status), 11) << "could not make / shared";
  EXPECT_NE(WEXITSTATUS(status), 12) << "the run under the mount namespace failed";
  EXPECT_NE(WEXITSTATUS(status), 13) << "the sandbox's mounts appeared in the parent namespace";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(IsolationTest, LoopbackListenerIsUnreachable) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string port = absl::StrCat(ntohs(addr.sin_port));
  // Control: without layers the connect works, so the checks below can fail.
  absl::StatusOr<RunResult> control = RunIsolated(Request({Helper(), "connect", port}), Only({}));
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(control->exit_code, 0) << control->out.data;
  for (Layer layer : {Layer::kNetNs, Layer::kLandlock, Layer::kSeccomp}) {
    if (missing_.count(layer)) continue;
    absl::StatusOr<RunResult> res = RunIsolated(Request({Helper(), "connect", port}), Only({layer}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(res->exit_code, 1) << LayerName(layer) << ": " << res->out.data;
  }
  close(listener);
}

TEST_F(IsolationTest, DoubleForkedDaemonIsGoneWhenRunReturns) {
  static int counter = 0;
  auto token = [] { return absl::StrCat("1000.", getpid(), ++counter); };
  // Control: the plain runner's group kill misses a setsid daemon.
  std::string t0 = token();
  absl::StatusOr<RunResult> control = RunIsolated(Request({Helper(), "daemon", t0}), Only({}));
  ASSERT_TRUE(control.ok());
  std::vector<pid_t> survivors = FindProcesses(t0);
  for (int i = 0; i < 50 && survivors.empty(); ++i) {
    usleep(10000);
    survivors = FindProcesses(t0);
  }
  EXPECT_FALSE(survivors.empty()) << "control: the daemon should outlive a run without layers";
  for (pid_t pid : survivors) kill(pid, SIGKILL);
  for (Layer layer : {Layer::kReaper, Layer::kPidNs, Layer::kCgroup}) {
    if (missing_.count(layer)) continue;
    std::string t = token();
    absl::StatusOr<RunResult> res = RunIsolated(Request({Helper(), "daemon", t}), Only({layer}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(res->exit_code, 0);
    std::vector<pid_t> left = FindProcesses(t);
    EXPECT_TRUE(left.empty()) << LayerName(layer) << ": the daemon outlived the run";
    for (pid_t pid : left) kill(pid, SIGKILL);
  }
}

// Incident shape: the runner's child that waits for the pid namespace's init is killed on its own
// (the OOM killer picks it, an operator kills the pid), and the command runs on, unwatched, with
// nothing left to time it out. The runner's group kill when its child ends reaches init, and init's
// PR_SET_PDEATHSIG would too; either way the kernel then ends everything in the namespace.
TEST_F(IsolationTest, KillingTheWaiterEndsEverythingInThePidNamespace) {
  SKIP_UNLESS_LAYERS(Layer::kPidNs);
  const std::string token = absl::StrCat("2000.", getpid());
  const std::set<pid_t> before = OurChildren();
  absl::StatusOr<RunResult> res;
  std::thread run([&] { res = RunIsolated(Request({"/bin/sleep", token}), Only({Layer::kPidNs})); });
  std::vector<pid_t> command;
  for (int i = 0; i < 500 && command.empty(); ++i) {
    usleep(10000);
    command = FindProcesses(token);
  }
  ASSERT_FALSE(command.empty()) << "the command never started";
  for (pid_t pid : OurChildren()) {
    if (before.count(pid) == 0) kill(pid, SIGKILL);  // The runner's direct child: the waiter.
  }
  std::vector<pid_t> left = FindProcesses(token);
  for (int i = 0; i < 200 && !left.empty(); ++i) {
    usleep(10000);
    left = FindProcesses(token);
  }
  EXPECT_TRUE(left.empty()) << "the command outlived the waiter of its pid namespace";
  for (pid_t pid : left) kill(pid, SIGKILL);
  run.join();
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->term_signal.value_or(0), SIGKILL);
}

// The subreaper waiter stands in for the command; on a timeout the runner's SIGKILL after the grace
// period must not kill the waiter before it has swept what it adopted, or a setsid daemon would be
// reparented to the host's init and survive (with neither a pid namespace nor a cgroup to catch it).
TEST_F(IsolationTest, DaemonOfACommandThatIgnoresSigtermIsGoneAfterTheTimeoutWithOnlyTheReaper) {
  SKIP_UNLESS_LAYERS(Layer::kReaper);
  const std::string token = absl::StrCat("1000.", getpid(), "99");
  RunRequest r = Request({"/bin/sh", "-c",
                          absl::StrCat("trap '' TERM; ", Helper(), " daemon ", token, "; while :; do sleep 0.05; done")});
  r.wall_timeout = absl::Milliseconds(500);
  r.kill_grace = absl::Milliseconds(200);
  absl::StatusOr<RunResult> res = RunIsolated(r, Only({Layer::kReaper}));
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_TRUE(res->timed_out);
  EXPECT_EQ(res->term_signal, SIGKILL);
  std::vector<pid_t> left = FindProcesses(token);
  EXPECT_TRUE(left.empty()) << "the daemon escaped when the timeout killed the waiter";
  for (pid_t pid : left) kill(pid, SIGKILL);
}

TEST_F(IsolationTest, ForkBombIsContainedByPidsMax) {
  SKIP_UNLESS_LAYERS(Layer::kCgroup);
  IsolationOptions o = Only({Layer::kCgroup});
  o.pids = 32;
  absl::StatusOr<RunResult> res = RunIsolated(Request({Helper(), "forkbomb", "500"}), o);
  ASSERT_TRUE(res.ok()) << res.status();
  int forked = -1;
  ASSERT_EQ(sscanf(res->out.data.c_str(), "forked %d", &forked), 1) << res->out.data;
  EXPECT_LT(forked, 32);
  EXPECT_TRUE(Has(res->limits_in_force, "cgroup.pids=32"));
}

TEST_F(IsolationTest, MemoryHogIsKilledByTheMemoryLimitAndTheResultSaysSo) {
  SKIP_UNLESS_LAYERS(Layer::kCgroup);
  IsolationOptions o = Only({Layer::kCgroup});
  o.memory_bytes = 64 << 20;
  absl::StatusOr<RunResult> res = RunIsolated(Request({Helper(), "memhog", "1024"}), o);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->term_signal, SIGKILL) << res->out.data;
  EXPECT_TRUE(res->memory_limit_killed);
}

TEST_F(IsolationTest, CgroupLimitsAreListedAndAPlainRunIsNotCalledOomKilled) {
  SKIP_UNLESS_LAYERS(Layer::kCgroup);
  IsolationOptions o = Only({Layer::kCgroup});
  o.memory_bytes = 256 << 20;
  o.pids = 64;
  o.cpu_millis = 500;
  absl::StatusOr<RunResult> res = RunIsolated(Request({"/bin/true"}), o);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_FALSE(res->memory_limit_killed);
  const std::vector<std::string>& in = res->limits_in_force;
  for (const char* limit : {"cgroup.memory=268435456", "cgroup.pids=64", "cgroup.cpu_millis=500"}) {
    EXPECT_TRUE(std::count(in.begin(), in.end(), limit) == 1) << limit << " not in " << absl::StrJoin(in, ",");
  }
  IsolationOptions unlimited = Only({Layer::kCgroup});
  unlimited.memory_bytes = std::nullopt;
  unlimited.pids = std::nullopt;
  unlimited.cpu_millis = std::nullopt;
  res = RunIsolated(Request({"/bin/true"}), unlimited);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_FALSE(Has(res->limits_in_force, "cgroup.")) << absl::StrJoin(res->limits_in_force, ",");
}

// Each namespace layer is applied when asked for, and only then: the command's namespaces are
// compared with the test's own through /proc/self/ns.
TEST_F(IsolationTest, OnlyTheNamespacesAskedForAreEntered) {
  if (geteuid() != 0) GTEST_SKIP() << "as non-root every namespace brings a user namespace along";
  SKIP_UNLESS_LAYERS(Layer::kMountNs, Layer::kUtsNs, Layer::kIpcNs);
  const std::vector<std::string> kinds = {"mnt", "uts", "ipc", "user", "net"};
  auto own = [&] {
    std::vector<std::string> out;
    for (const std::string& k : kinds) {
      char buf[64] = {};
      EXPECT_GT(readlink(absl::StrCat("/proc/self/ns/", k).c_str(), buf, sizeof(buf) - 1), 0);
      out.push_back(buf);
    }
    return absl::StrJoin(out, "\n") + "\n";
  }();
  auto entered = [&](std::set<Layer> layers) -> std::string {
    std::string script = "readlink";
    for (const std::string& k : kinds) script += " /proc/self/ns/" + k;
    absl::StatusOr<RunResult> res = RunIsolated(Request({"/bin/sh", "-c", script}), Only(layers));
    if (!res.ok()) return std::string(res.status().message());
    std::vector<std::string> mine = absl::StrSplit(own, '\n');
    std::vector<std::string> theirs = absl::StrSplit(res->out.data, '\n');
    std::vector<std::string> differ;
    for (size_t i = 0; i < kinds.size() && i < theirs.size(); ++i) {
      if (theirs[i] != mine[i]) differ.push_back(kinds[i]);
    }
    return absl::StrJoin(differ, ",");
  };
  EXPECT_EQ(entered({Layer::kMountNs}), "mnt");
  EXPECT_EQ(entered({Layer::kUtsNs, Layer::kIpcNs}), "uts,ipc");
  EXPECT_EQ(entered({}), "");
}

TEST_F(IsolationTest, ProbeDetailsSayWhatEachLayerDoes) {
  for (const LayerStatus& s : ProbeLayers()) {
    if (!s.available) continue;
    if (s.layer == Layer::kNetNs) {
      EXPECT_EQ(s.detail, "loopback only, down");
    }
    if (s.layer == Layer::kMountNs) {
      EXPECT_EQ(s.detail, "workspace rw, rest read-only (mount_setattr), private /tmp");
    }
    if (s.layer == Layer::kLandlock) {
      int abi = 0;
      ASSERT_TRUE(absl::StartsWith(s.detail, "ABI ")) << s.detail;
      ASSERT_TRUE(absl::SimpleAtoi(s.detail.substr(4, s.detail.find(',') - 4), &abi)) << s.detail;
      EXPECT_GT(abi, 0);
      EXPECT_EQ(absl::StrContains(s.detail, ", TCP rights"), abi >= 4) << s.detail;
      EXPECT_EQ(absl::StrContains(s.detail, ", IPC scoping"), abi >= 6) << s.detail;
    }
  }
}

TEST_F(IsolationTest, DefaultSeccompProfileDeniesEscapesInsideTheRunner) {
  SKIP_UNLESS_LAYERS(Layer::kSeccomp);
  for (const char* call : {"ptrace", "mount", "unshare", "keyctl", "io_uring_setup", "tiocsti"}) {
    absl::StatusOr<RunResult> res = RunIsolated(Request({Helper(), "deny", call}), Only({Layer::kSeccomp}));
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(res->exit_code, 0) << call << ": " << res->out.data << res->err.data;
  }
}

TEST_F(IsolationTest, WallTimeoutStillKillsEverythingWithAllLayers) {
  RunRequest r = Request({"/bin/sh", "-c", "sleep 100"});
  r.wall_timeout = absl::Milliseconds(500);
  absl::StatusOr<RunResult> res = RunIsolated(r, IsolationOptions::AllLayers());
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_TRUE(res->timed_out);
  EXPECT_TRUE(res->term_signal.has_value());
}

TEST_F(IsolationTest, RequiredLayerThatCannotApplyFailsClosed) {
  IsolationOptions o = Only({});
  o.allow_network = true;
  o.required = {Layer::kNetNs};  // A net namespace contradicts an allowed network.
  absl::StatusOr<RunResult> res = RunIsolated(Request({"/bin/true"}), o);
  EXPECT_EQ(CodeOf(res.status()), ErrorCode::kEUNSUPPORTED) << res.status();
}

TEST_F(IsolationTest, EnabledLayerThatCannotApplyIsNamedAndTheRunProceeds) {
  IsolationOptions o = Only({Layer::kNetNs});
  o.allow_network = true;
  absl::StatusOr<RunResult> res = RunIsolated(Request({"/bin/true"}), o);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_TRUE(Has(res->layers_unavailable, "netns: ")) << absl::StrJoin(res->layers_unavailable, ";");
}

}  // namespace
}  // namespace sandbox
