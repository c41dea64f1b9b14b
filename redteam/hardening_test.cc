// Red-team group `hardening`: the escapes the portable runner cannot stop (issue 7), each proved
// against the kernel layer that closes it, through RunIsolated (sandbox/isolation.h). A case asks for
// its layer as `required`, so a layer that is missing fails closed; the case then skips and names the
// layer and the reason from ProbeLayers(). Under --config=portable every layer is unavailable: the
// cases skip, and the fail-closed case runs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "redteam/run_testing.h"
#include "redteam/testing.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"
#include "sandbox/runner.h"

namespace redteam {
namespace {

using sandbox::Layer;

// Why `layer` is unavailable here, or nullopt when it is available.
std::optional<std::string> Unavailable(Layer layer) {
  for (const sandbox::LayerStatus& s : sandbox::ProbeLayers()) {
    if (s.layer == layer && !s.available) {
      return std::string(sandbox::LayerName(layer)) + " unavailable: " + s.detail;
    }
  }
  return std::nullopt;
}

#define SKIP_UNLESS_LAYER(layer)                                          \
  do {                                                                    \
    if (std::optional<std::string> why = Unavailable(layer)) GTEST_SKIP() << *why; \
  } while (0)

class HardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = dir_.Join("ws");
    outside_ = dir_.Join("outside");
    ASSERT_EQ(mkdir(ws_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
  }
  void TearDown() override { KillProcessesWithMarker(marker_); }

  sandbox::RunRequest Shell(const std::string& script) {
    sandbox::RunRequest request = ShellRequest(ws_, script, marker_);
    request.wall_timeout = absl::Seconds(5);
    return request;
  }
  // The environment for the compiled syscall probe. Under --config=asan the probe is instrumented,
  // and LeakSanitizer's exit check ptraces the process, which the seccomp layer rightly refuses: leak
  // checking is off inside the sandbox.
  std::map<std::string, std::string> ProbeEnvironment() const {
    std::map<std::string, std::string> env = sandbox::DefaultEnvironment(ws_);
    env["ASAN_OPTIONS"] = "detect_leaks=0";
    return env;
  }
  sandbox::IsolationOptions Only(std::set<Layer> layers) {
    sandbox::IsolationOptions options;
    options.enabled = layers;
    options.required = layers;
    options.workspace = ws_;
    return options;
  }
  // RunIsolated, bounded by the rescue of run_testing.h; a required layer that fails closed is a skip.
  std::optional<sandbox::RunResult> RunOrSkip(const sandbox::RunRequest& request,
                                              const sandbox::IsolationOptions& options) {
    absl::StatusOr<sandbox::RunResult> r = sandbox::RunIsolated(request, options);
    if (CodeName(r) == "EUNSUPPORTED") {
      skipped_ = r.status().ToString();
      return std::nullopt;
    }
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return std::nullopt;
    return *std::move(r);
  }
  // Copies the syscall probe into the workspace, where every layer lets the command run it.
  std::string InstallProbe() {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* workspace = std::getenv("TEST_WORKSPACE");
    const std::string from = std::string(srcdir ? srcdir : ".") + "/" +
                             (workspace ? workspace : "sandboxed_agent") + "/redteam/syscall_probe";
    const std::string to = ws_ + "/syscall_probe";
    std::error_code ec;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
    chmod(to.c_str(), 0755);
    return ec ? "" : to;
  }

  ScratchDir dir_{"hardening"};
  std::string ws_, outside_;
  std::string marker_ = UniqueMarker("hardening");
  std::string skipped_;
};

#define RUN_OR_SKIP(var, request, options)                     \
  std::optional<sandbox::RunResult> var = RunOrSkip(request, options); \
  if (!var.has_value()) {                                      \
    if (!skipped_.empty()) GTEST_SKIP() << skipped_;           \
    return;                                                    \
  }

// Incident (issue 7): `sh -c 'echo x > /tmp/outside'` from a test command wrote outside the workspace;
// the path policy guards the agent's tools, not the commands it runs. Landlock makes everything
// outside the workspace read-only.
TEST_F(HardeningTest, ShellWriteOutsideTheWorkspaceIsRefusedByLandlock) {
  SKIP_UNLESS_LAYER(Layer::kLandlock);
  RUN_OR_SKIP(r, Shell("echo pwned > '" + outside_ + "/pwned.txt'; echo inside > inside.txt"),
              Only({Layer::kLandlock}));
  EXPECT_FALSE(Exists(outside_ + "/pwned.txt")) << "Landlock let the write through";
  EXPECT_EQ(ReadFile(ws_ + "/inside.txt"), "inside\n") << "the workspace itself must stay writable";
}

// The same incident, closed by the mount namespace (the workspace writable, the rest read-only).
TEST_F(HardeningTest, ShellWriteOutsideTheWorkspaceIsRefusedByTheMountNamespace) {
  SKIP_UNLESS_LAYER(Layer::kMountNs);
  RUN_OR_SKIP(r, Shell("echo pwned > '" + outside_ + "/pwned.txt'; echo inside > inside.txt"),
              Only({Layer::kMountNs}));
  EXPECT_FALSE(Exists(outside_ + "/pwned.txt")) << "the mount namespace let the write through";
  EXPECT_EQ(ReadFile(ws_ + "/inside.txt"), "inside\n");
}

// Incident (issue 7): a test command connected to a service listening on 127.0.0.1 outside the
// sandbox (a database, a cloud agent). In a fresh net namespace loopback is someone else's.
TEST_F(HardeningTest, ConnectToALoopbackListenerOutsideIsRefusedByTheNetNamespace) {
  SKIP_UNLESS_LAYER(Layer::kNetNs);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  sandbox::RunRequest request;
  request.argv = {"/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected"};
  request.cwd = ws_;
  request.wall_timeout = absl::Seconds(5);
  // Control: without the namespace the same command does connect, so the case can fail.
  absl::StatusOr<sandbox::RunResult> plain = sandbox::Run(request);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->out.data, "connected\n") << plain->err.data;
  const int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (accepted >= 0) close(accepted);
  RUN_OR_SKIP(r, request, Only({Layer::kNetNs}));
  EXPECT_EQ(r->out.data.find("connected"), std::string::npos) << "reached the host's loopback";
  EXPECT_NE(r->exit_code, 0);
  errno = 0;
  const int second = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_EQ(second, -1);
  EXPECT_EQ(errno, EAGAIN) << "a connection from inside the sandbox arrived";
  if (second >= 0) close(second);
  close(listener);
}

// Incident / decision (README "fork bomb as root"): RLIMIT_NPROC does not bind root; the pids cgroup
// does. A bounded bomb (depth 7: up to 255 shells plus their sleeps) under pids.max = 24 never has
// more than 24 processes, and none survives the run.
TEST_F(HardeningTest, ForkBombIsContainedByPidsMax) {
  SKIP_UNLESS_LAYER(Layer::kCgroup);
  sandbox::RunRequest request =
      Shell("f() { if [ \"$1\" -gt 0 ]; then f $(($1 - 1)) & f $(($1 - 1)) & fi; sleep 60; }; f 7");
  request.wall_timeout = absl::Milliseconds(2500);
  sandbox::IsolationOptions options = Only({Layer::kCgroup});
  options.pids = 24;
  std::atomic<bool> stop{false};
  std::atomic<int> peak{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      peak = std::max(peak.load(), static_cast<int>(ProcessesWithMarker(marker_).size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::optional<sandbox::RunResult> r = RunOrSkip(request, options);
  stop = true;
  watcher.join();
  if (!r.has_value()) {
    if (!skipped_.empty()) GTEST_SKIP() << skipped_;
    return;
  }
  EXPECT_LE(peak.load(), 24) << "pids.max did not bind";
  // The shell reports the fork that pids.max refused; as root without the cgroup no fork fails (the
  // process group's bounded bomb reaches 63 shells), so this proves the limit, not a slow machine.
  EXPECT_NE(r->err.data.find("Cannot fork"), std::string::npos)
      << "no fork was refused: " << r->err.data.substr(0, 500);
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty()) << "bomb processes survived the run";
  ::testing::Test::RecordProperty("peak_bomb_shells", peak.load());
}

// Incident (issue 7): a memory hog took the machine into swap and the OOM killer picked the agent.
// The cgroup's memory limit kills the hog, and the result says so. Here the hog is the command itself.
TEST_F(HardeningTest, MemoryHogIsKilledByTheCgroupLimitAndTheResultSaysSo) {
  SKIP_UNLESS_LAYER(Layer::kCgroup);
  // awk doubles a string until something stops it: the 64 MiB cgroup limit, or (the backstop, so a
  // missing cgroup cannot take the machine) a 1 GiB RLIMIT_AS, which fails with ENOMEM instead of an
  // OOM kill. `exec` makes awk the direct child.
  sandbox::RunRequest request = Shell("exec awk 'BEGIN { s = \"x\"; while (1) s = s s }'");
  request.limits.address_space_bytes = 1ull << 30;
  request.wall_timeout = absl::Seconds(20);
  sandbox::IsolationOptions options = Only({Layer::kCgroup});
  options.memory_bytes = 64ull << 20;
  RUN_OR_SKIP(r, request, options);
  EXPECT_TRUE(r->memory_limit_killed) << "exit " << r->exit_code.value_or(-1) << " signal "
                                      << r->term_signal.value_or(0) << ": " << r->err.data;
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_FALSE(r->timed_out);
}

// Incident: the hog was one stage of the test script's pipeline; the OOM kill of a grandchild came
// back as the shell's exit status 137, and nothing said the memory limit had fired. (Found by this
// suite: the flag once required the direct child to be the victim.)
TEST_F(HardeningTest, MemoryHogInAPipelineIsReportedAsAMemoryKillToo) {
  SKIP_UNLESS_LAYER(Layer::kCgroup);
  // GNU tail keeps the last N bytes of a pipe in memory: 256 MiB against a 64 MiB limit (bounded,
  // so a missing cgroup costs 256 MiB, not the machine).
  sandbox::RunRequest request = Shell("head -c 268435456 /dev/zero | tail -c 268435456 > /dev/null");
  request.wall_timeout = absl::Seconds(20);
  sandbox::IsolationOptions options = Only({Layer::kCgroup});
  options.memory_bytes = 64ull << 20;
  RUN_OR_SKIP(r, request, options);
  EXPECT_EQ(r->exit_code, 137) << "the shell reports its killed stage as 128 + SIGKILL";
  EXPECT_TRUE(r->memory_limit_killed) << "the cgroup counted an OOM kill; the result must say so";
}

// Incident / decision (README "setsid daemon"): a double-forked setsid daemon left the process group
// and outlived the run. The subreaper adopts it and kills it through a pidfd before Run returns.
TEST_F(HardeningTest, SetsidDaemonIsGoneWhenRunReturns) {
  SKIP_UNLESS_LAYER(Layer::kReaper);
  RUN_OR_SKIP(r,
              Shell("setsid sh -c 'echo $$ > daemon.pid; while :; do sleep 0.1; done' \"$0\" "
                    "</dev/null >/dev/null 2>&1 & "
                    "while [ ! -s daemon.pid ]; do sleep 0.01; done; exit 0"),
              Only({Layer::kReaper}));
  std::optional<pid_t> daemon = AwaitPidFile(ws_ + "/daemon.pid");
  ASSERT_TRUE(daemon.has_value());
  // The pid was written from inside the run; without a pid namespace it is the host's pid.
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty()) << "the setsid daemon outlived Run";
}

// Incident (issue 7): ptrace, mount, unshare, keyctl, io_uring and bpf are the usual first steps of a
// kernel or sandbox escape. The default seccomp profile answers EPERM to each.
TEST_F(HardeningTest, DefaultSeccompProfileRefusesEscapeSyscalls) {
  SKIP_UNLESS_LAYER(Layer::kSeccomp);
  const std::string probe = InstallProbe();
  ASSERT_FALSE(probe.empty()) << "cannot copy redteam/syscall_probe into the workspace";
  sandbox::RunRequest request;
  request.argv = {probe, "ptrace", "mount", "unshare", "keyctl", "io_uring_setup", "bpf"};
  request.cwd = ws_;
  request.env = ProbeEnvironment();
  request.wall_timeout = absl::Seconds(5);
  sandbox::IsolationOptions options = Only({Layer::kSeccomp});
  options.enabled.insert(Layer::kNoNewPrivs);
  RUN_OR_SKIP(r, request, options);
  EXPECT_EQ(r->exit_code, 0) << r->err.data;
  for (const char* call : {"ptrace", "mount", "unshare", "keyctl", "io_uring_setup", "bpf"}) {
    EXPECT_NE(r->out.data.find(std::string(call) + "=EPERM\n"), std::string::npos)
        << call << " was not refused with EPERM: " << r->out.data;
  }
}

// Incident: TIOCSTI pushed keystrokes into the terminal of the user who started the agent, which ran
// them after the agent exited. The command has no controlling terminal (new session) and seccomp
// refuses the ioctl.
TEST_F(HardeningTest, TiocstiCannotInjectIntoATerminal) {
  const std::string probe = InstallProbe();
  ASSERT_FALSE(probe.empty());
  sandbox::RunRequest request;
  request.argv = {probe, "tiocsti"};
  request.cwd = ws_;
  request.env = ProbeEnvironment();
  request.wall_timeout = absl::Seconds(5);
  sandbox::IsolationOptions options = sandbox::IsolationOptions::AllLayers();
  options.workspace = ws_;
  RUN_OR_SKIP(r, request, options);
  EXPECT_EQ(r->out.data.find("tiocsti=OK"), std::string::npos) << r->out.data;
  EXPECT_NE(r->out.data.find("tiocsti="), std::string::npos) << r->err.data;
}

// Incident: a layer silently failed to apply and the run went ahead "isolated". Every layer the
// probe reports available must be listed in force after a run with all layers enabled.
TEST_F(HardeningTest, EveryAvailableLayerIsReportedInForce) {
  sandbox::IsolationOptions options = sandbox::IsolationOptions::AllLayers();
  options.workspace = ws_;
  absl::StatusOr<sandbox::RunResult> r = sandbox::RunIsolated(Shell("exit 0"), options);
  ASSERT_TRUE(r.ok()) << r.status();
  int available = 0;
  for (const sandbox::LayerStatus& s : sandbox::ProbeLayers()) {
    const std::string name(sandbox::LayerName(s.layer));
    // A layer in force is listed by name, possibly with details: "cgroup(v1:cpu,memory,pids)".
    const bool in_force =
        std::any_of(r->layers_in_force.begin(), r->layers_in_force.end(), [&](const std::string& l) {
          return l == name || l.starts_with(name + "(");
        });
    if (s.available) {
      ++available;
      EXPECT_TRUE(in_force) << name << " is available but was not applied";
    } else {
      EXPECT_FALSE(in_force) << name << " is unavailable but claimed in force";
      const bool named = std::any_of(r->layers_unavailable.begin(), r->layers_unavailable.end(),
                                     [&](const std::string& u) { return u.find(name) != std::string::npos; });
      EXPECT_TRUE(named) << name << " is missing and the result does not say so";
    }
  }
  ::testing::Test::RecordProperty("available_layers", available);
  std::string in_force;
  for (const std::string& l : r->layers_in_force) in_force += l + " ";
  ::testing::Test::RecordProperty("layers_in_force", in_force);
}

// Incident: `--require=landlock` on a machine without Landlock ran the command unprotected. A required
// layer that is unavailable fails closed, and the command never starts.
TEST_F(HardeningTest, RequiredButUnavailableLayerFailsClosed) {
  int checked = 0;
  for (const sandbox::LayerStatus& s : sandbox::ProbeLayers()) {
    if (s.available) continue;
    ++checked;
    sandbox::IsolationOptions options = Only({s.layer});
    absl::StatusOr<sandbox::RunResult> r = sandbox::RunIsolated(Shell("echo ran > ran.txt"), options);
    EXPECT_EQ(CodeName(r), "EUNSUPPORTED") << sandbox::LayerName(s.layer) << ": " << r.status();
    EXPECT_FALSE(Exists(ws_ + "/ran.txt")) << "the command ran without its required layer";
  }
  if (checked == 0) {
    GTEST_SKIP() << "every layer is available on this machine and build; under --config=portable "
                    "none is, and this case checks each";
  }
}

}  // namespace
}  // namespace redteam
