// Proofs in forked children: with the Landlock layer, a write outside the workspace, a TCP connect to
// a loopback listener, a signal to the parent and an abstract unix connect are refused; each test
// fails if the layer is not applied. Skips name the missing ABI.
#include "sandbox/linux/landlock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

std::string MakeWorkspace() {
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr ? base : "/var/tmp", "/ws-XXXXXX");
  char* made = mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr);
  return tmpl;
}

class LandlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    abi_ = LandlockAbi(&why);
    if (abi_ == 0) GTEST_SKIP() << why;
    workspace_ = MakeWorkspace();
  }

  // no_new_privs + the Landlock steps in a forked child, then `body`.
  ChildOutcome RunConfined(const std::function<int()>& body) {
    absl::StatusOr<PreparedLandlock> prepared = PrepareLandlock({.read_write = {workspace_, "/dev/null"}});
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 90;
      if (!RunSteps(LandlockSteps(*prepared)).ok()) return 91;
      return body();
    });
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : ChildOutcome{};
  }

  int abi_ = 0;
  std::string workspace_;
};

TEST_F(LandlockTest, ShellWriteOutsideWorkspaceIsRefusedInsideAllowed) {
  std::string outside = absl::StrCat("/tmp/landlock-outside-", getpid());
  unlink(outside.c_str());
  std::string script = absl::StrCat("echo y > ", workspace_, "/inside || exit 3; ",
                                    "echo x > ", outside, " 2>/dev/null && exit 4; exit 0");
  ChildOutcome out = RunConfined([&] {
    execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
    return 92;
  });
  struct stat st;
  bool leaked = stat(outside.c_str(), &st) == 0;
  unlink(outside.c_str());
  EXPECT_TRUE(out.Exited(0)) << out.ToString() << " (3: workspace not writable, 4: outside write worked)";
  EXPECT_FALSE(leaked) << outside << " was created";
}

// Creating a file is one right (MAKE_REG), writing an existing one another (WRITE_FILE) and, from
// ABI 3, truncate(2) a third: each must be handled, or an existing file outside stays writable.
TEST_F(LandlockTest, ExistingFileOutsideCannotBeWrittenOrTruncatedInsideCan) {
  const std::string outside = absl::StrCat(MakeWorkspace(), "/existing");
  const std::string inside = workspace_ + "/existing";
  for (const std::string& path : {outside, inside}) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(write(fd, "data", 4), 4);
    close(fd);
  }
  const int abi = abi_;
  ChildOutcome out = RunConfined([&] {
    int fd = open(inside.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return 10;  // The workspace must stay writable.
    close(fd);
    if (truncate(inside.c_str(), 1) != 0) return 11;
    if (int rc = ExpectErrno(open(outside.c_str(), O_WRONLY | O_CLOEXEC), EACCES); rc != 0) return rc;
    if (abi >= 3) return ExpectErrno(truncate(outside.c_str(), 0), EACCES);
    return 0;
  });
  struct stat st;
  ASSERT_EQ(stat(outside.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4) << "the file outside the workspace was truncated";
  ASSERT_TRUE(out.exit_code.has_value()) << out.ToString();
  EXPECT_EQ(*out.exit_code, 0) << DescribeExpectErrno(*out.exit_code)
                               << " (10: workspace file not writable, 11: not truncatable)";
}

TEST_F(LandlockTest, TcpConnectToLoopbackListenerIsRefused) {
  if (abi_ < 4) GTEST_SKIP() << "Landlock ABI " << abi_ << " < 4 has no network rights";
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ChildOutcome out = RunConfined([&] {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    return ExpectErrno(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), EACCES);
  });
  close(listener);
  ASSERT_TRUE(out.exit_code.has_value()) << out.ToString();
  EXPECT_EQ(*out.exit_code, 0) << DescribeExpectErrno(*out.exit_code);
}

TEST_F(LandlockTest, SignalToTheParentIsRefused) {
  if (abi_ < 6) GTEST_SKIP() << "Landlock ABI " << abi_ << " < 6 has no signal scoping";
  ChildOutcome out = RunConfined([] { return ExpectErrno(kill(getppid(), 0), EPERM); });
  ASSERT_TRUE(out.exit_code.has_value()) << out.ToString();
  EXPECT_EQ(*out.exit_code, 0) << DescribeExpectErrno(*out.exit_code);
}

TEST_F(LandlockTest, AbstractUnixConnectOutIsRefused) {
  if (abi_ < 6) GTEST_SKIP() << "Landlock ABI " << abi_ << " < 6 has no abstract socket scoping";
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string name = absl::StrCat("sandbox-landlock-test-", getpid());
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ChildOutcome out = RunConfined([&] {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    return ExpectErrno(connect(s, reinterpret_cast<sockaddr*>(&addr), len), EPERM);
  });
  close(listener);
  ASSERT_TRUE(out.exit_code.has_value()) << out.ToString();
  EXPECT_EQ(*out.exit_code, 0) << DescribeExpectErrno(*out.exit_code);
}

TEST(LandlockPrepareTest, RelativePathIsInvalid) {
  if (LandlockAbi() == 0) GTEST_SKIP() << "no Landlock";
  EXPECT_FALSE(PrepareLandlock({.read_write = {"relative/ws"}}).ok());
}

// What each Landlock ABI is asked to handle, without a kernel: a right the kernel does not know makes
// landlock_create_ruleset fail with EINVAL, so asking an ABI 1 kernel for REFER would leave a run
// without the layer. The masks are the uapi bit values (linux/landlock.h).
TEST(LandlockPrepareTest, EachAbiIsAskedOnlyForTheRightsItKnows) {
  struct Want {
    uint64_t fs, net, scoped;
    size_t attr_size;
    const char* describe;
  };
  const Want want[] = {
      {0x1FFF, 0, 0, 8, "landlock(abi=1,fs)"},        // Execute .. MakeSym.
      {0x3FFF, 0, 0, 8, "landlock(abi=2,fs)"},        // + Refer.
      {0x7FFF, 0, 0, 8, "landlock(abi=3,fs)"},        // + Truncate.
      {0x7FFF, 0x3, 0, 16, "landlock(abi=4,fs,net)"}, // + TCP bind and connect.
      {0x7FFF, 0x3, 0, 16, "landlock(abi=5,fs,net)"}, // IoctlDev stays unhandled.
      {0x7FFF, 0x3, 0x3, 24, "landlock(abi=6,fs,net,scope)"},  // + abstract unix, signals.
      {0x7FFF, 0x3, 0x3, 24, "landlock(abi=7,fs,net,scope)"},
  };
  for (int abi = 1; abi <= 7; ++abi) {
    const Want& w = want[abi - 1];
    absl::StatusOr<PreparedLandlock> p = PrepareLandlockForAbi({.read_write = {"/ws"}}, abi, "");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->abi, abi);
    EXPECT_EQ(p->handled_fs, w.fs) << "abi " << abi;
    EXPECT_EQ(p->handled_net, w.net) << "abi " << abi;
    EXPECT_EQ(p->scoped, w.scoped) << "abi " << abi;
    EXPECT_EQ(p->attr_size, w.attr_size) << "abi " << abi;
    EXPECT_EQ(p->read_only_access, 0xDu) << "abi " << abi;  // Execute, ReadFile, ReadDir.
    EXPECT_EQ(p->read_write_access, w.fs) << "abi " << abi;
    EXPECT_EQ(DescribeLandlock(*p), w.describe);
  }
}

TEST(LandlockPrepareTest, NetworkAndScopingAreLeftOutWhenThePolicyAllowsThem) {
  LandlockPolicy policy;
  policy.read_write = {"/ws"};
  policy.deny_tcp = false;
  policy.scope_ipc = false;
  absl::StatusOr<PreparedLandlock> p = PrepareLandlockForAbi(policy, 7, "");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->handled_net, 0u);
  EXPECT_EQ(p->scoped, 0u);
  EXPECT_EQ(p->attr_size, 8u);
  EXPECT_EQ(DescribeLandlock(*p), "landlock(abi=7,fs)");
}

TEST(LandlockPrepareTest, NoLandlockIsUnsupportedWithTheReason) {
  absl::StatusOr<PreparedLandlock> p = PrepareLandlockForAbi({}, 0, "kernel says no");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "landlock: kernel says no");
  LandlockPolicy relative;
  relative.read_only = {"etc"};
  EXPECT_FALSE(PrepareLandlockForAbi(relative, 7, "").ok());
}

}  // namespace
}  // namespace sandbox::linux_layers
