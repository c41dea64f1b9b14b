// Proofs in forked children. Each fails when its namespace is not created: the mount namespace keeps
// writes outside the workspace off the host, the net namespace refuses a loopback listener and the
// resolver, the pid namespace ends a double-forked daemon with its init, uts/user are visible.
#include "sandbox/linux/namespaces.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

std::string MakeDir(const std::string& base, const char* name) {
  std::string tmpl = absl::StrCat(base, "/", name, "-XXXXXX");
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr) << tmpl;
  return tmpl;
}

std::string TestTmp() {
  const char* t = getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/var/tmp";
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class NamespacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workspace_ = MakeDir(TestTmp(), "ws");
    NamespaceOptions all;
    all.workspace = workspace_;
    absl::Status probe = ProbeNamespaces(all);
    if (!probe.ok()) GTEST_SKIP() << probe.message();
  }

  // Isolate steps, pid steps, then /bin/sh -c `script`. Returns how the (mirrored) command ended.
  ChildOutcome RunIsolated(const NamespaceOptions& options, const std::string& script) {
    absl::StatusOr<PreparedNamespaces> p = PrepareNamespaces(options);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return {};
    absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
      if (StepFailure f = RunSteps(IsolateSteps(*p)); !f.ok()) return 90;
      if (StepFailure f = RunSteps(PidNamespaceSteps(*p)); !f.ok()) return 91;
      execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
      return 92;
    });
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : ChildOutcome{};
  }

  NamespaceOptions Options() {
    NamespaceOptions o;
    o.workspace = workspace_;
    return o;
  }

  std::string workspace_;
};

TEST_F(NamespacesTest, OnlyTheWorkspaceIsWritableAndTmpIsPrivate) {
  std::string outside_dir = MakeDir(TestTmp(), "outside");
  std::string tmp_file = absl::StrCat("/tmp/ns-outside-", getpid());
  unlink(tmp_file.c_str());
  std::string script = absl::StrCat(
      "echo y > ", workspace_, "/inside || exit 3; ",
      "echo x > ", tmp_file, " || exit 4; ",
      "echo z > ", outside_dir, "/f 2>/dev/null && exit 5; exit 0");
  ChildOutcome out = RunIsolated(Options(), script);
  EXPECT_TRUE(out.Exited(0)) << out.ToString()
                             << " (3: workspace not writable, 4: private /tmp missing, 5: outside writable)";
  EXPECT_TRUE(Exists(workspace_ + "/inside"));
  EXPECT_FALSE(Exists(tmp_file)) << "the write to /tmp reached the host";
  EXPECT_FALSE(Exists(outside_dir + "/f"));
  unlink(tmp_file.c_str());
}

TEST_F(NamespacesTest, WorkspaceUnderTmpSurvivesThePrivateTmp) {
  std::string ws = MakeDir("/tmp", "ns-ws");
  NamespaceOptions o = Options();
  o.workspace = ws;
  ChildOutcome out = RunIsolated(o, absl::StrCat("echo y > ", ws, "/inside"));
  EXPECT_TRUE(out.Exited(0)) << out.ToString();
  EXPECT_TRUE(Exists(ws + "/inside"));
  unlink((ws + "/inside").c_str());
  rmdir(ws.c_str());
}

// The private /tmp holds the chain of directories down to a workspace under /tmp and nothing else:
// no stray prefix of its name ("/tmp/n", "/tmp/ns", ...), no file of the host's /tmp.
TEST_F(NamespacesTest, PrivateTmpHoldsOnlyTheWorkspaceChain) {
  std::string outer = MakeDir("/tmp", "ns-chain");
  std::string ws = outer + "/inner";
  ASSERT_EQ(mkdir(ws.c_str(), 0755), 0);
  NamespaceOptions o = Options();
  o.workspace = ws;
  const std::string outer_name = outer.substr(5);
  ChildOutcome out = RunIsolated(
      o, absl::StrCat("[ \"$(ls -A /tmp)\" = '", outer_name, "' ] || exit 3; [ \"$(ls -A ", outer,
                      ")\" = inner ] || exit 4; echo y > ", ws, "/inside"));
  EXPECT_TRUE(out.Exited(0)) << out.ToString() << " (3: /tmp holds more than the chain, 4: so does "
                             << outer << ")";
  EXPECT_TRUE(Exists(ws + "/inside"));
  unlink((ws + "/inside").c_str());
  rmdir(ws.c_str());
  rmdir(outer.c_str());
}

TEST_F(NamespacesTest, LoopbackListenerAndResolverAreUnreachable) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  absl::StatusOr<PreparedNamespaces> p = PrepareNamespaces(Options());
  ASSERT_TRUE(p.ok());
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
    if (!RunSteps(IsolateSteps(*p)).ok()) return 90;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (int rc = ExpectErrno(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), ENETUNREACH); rc != 0) {
      return rc;
    }
    // DNS: a datagram to any resolver cannot leave (no route, no interface up).
    sockaddr_in dns{};
    dns.sin_family = AF_INET;
    dns.sin_port = htons(53);
    inet_pton(AF_INET, "8.8.8.8", &dns.sin_addr);
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    return ExpectErrno(sendto(u, "q", 1, 0, reinterpret_cast<sockaddr*>(&dns), sizeof(dns)), ENETUNREACH);
  });
  close(listener);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(out->exit_code.has_value()) << out->ToString();
  EXPECT_EQ(*out->exit_code, 0) << DescribeExpectErrno(*out->exit_code);
}

TEST_F(NamespacesTest, DoubleForkedDaemonDiesWithTheCommand) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // Not close-on-exec: the daemon inherits the write end.
  std::string script = absl::StrCat("(setsid sleep 1000 >&", fds[1], " &); exit 0");
  ChildOutcome out = RunIsolated(Options(), script);
  close(fds[1]);
  EXPECT_TRUE(out.Exited(0)) << out.ToString();
  pollfd pfd{fds[0], POLLIN, 0};
  int ready = poll(&pfd, 1, 5000);
  char c;
  EXPECT_TRUE(ready == 1 && read(fds[0], &c, 1) == 0) << "the daemon still holds the pipe: it outlived the run";
  close(fds[0]);
}

TEST_F(NamespacesTest, WaiterMirrorsExitCodeAndSignal) {
  EXPECT_TRUE(RunIsolated(Options(), "exit 7").Exited(7));
  ChildOutcome killed = RunIsolated(Options(), "kill -TERM $$; sleep 5");
  ASSERT_TRUE(killed.term_signal.has_value()) << killed.ToString();
  EXPECT_EQ(*killed.term_signal, SIGTERM);
}

TEST_F(NamespacesTest, CommandSeesItsOwnHostnameIdsAndPids) {
  std::string script = absl::StrCat("test \"$(hostname)\" = sandbox || exit 3; ",
                                    "test \"$(id -u)\" = ", geteuid(), " || exit 4; ",
                                    "test \"$$\" = 2 || exit 5; ",
                                    "test \"$(ls /proc | grep -c '^[0-9]')\" -le 8 || exit 6");
  ChildOutcome out = RunIsolated(Options(), script);
  EXPECT_TRUE(out.Exited(0)) << out.ToString() << " (3 hostname, 4 uid map, 5 pid, 6 /proc shows the host)";
}

TEST(NamespacesPrepareTest, RejectsBadWorkspaces) {
  NamespaceOptions o;
  o.workspace = "relative";
  EXPECT_FALSE(PrepareNamespaces(o).ok());
  o.workspace = "/";
  EXPECT_FALSE(PrepareNamespaces(o).ok());
  o.workspace = "/nonexistent/ws";
  EXPECT_FALSE(PrepareNamespaces(o).ok());
}

}  // namespace
}  // namespace sandbox::linux_layers
