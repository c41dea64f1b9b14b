// The async-signal-safe helpers every layer's child steps use: decimal formatting into a fixed
// buffer, string length, whole writes, and ending a stand-in process the way its command ended.
#include "sandbox/linux/child_step.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

std::string Format(uint64_t value, size_t size) {
  char buf[32];
  std::memset(buf, 'x', sizeof(buf));
  const size_t len = FormatUint(value, buf, size);
  if (size == 0) return buf[0] == 'x' ? "<untouched>" : "<written>";
  EXPECT_EQ(buf[len], '\0') << value;
  return std::string(buf, len);
}

TEST(FormatUintTest, WholeNumbersAndTheirEdges) {
  EXPECT_EQ(Format(0, 32), "0");
  EXPECT_EQ(Format(7, 32), "7");
  EXPECT_EQ(Format(1000, 32), "1000");
  EXPECT_EQ(Format(18446744073709551615ull, 32), "18446744073709551615");  // 20 digits.
}

TEST(FormatUintTest, AShortBufferKeepsTheLeadingDigitsAndTheTerminator) {
  EXPECT_EQ(Format(12345, 6), "12345");  // Exactly fits with its NUL.
  EXPECT_EQ(Format(12345, 5), "1234");
  EXPECT_EQ(Format(12345, 2), "1");
  EXPECT_EQ(Format(12345, 1), "");
  EXPECT_EQ(Format(12345, 0), "<untouched>");
}

TEST(CStrLenTest, CountsUpToTheNul) {
  EXPECT_EQ(CStrLen(""), 0u);
  EXPECT_EQ(CStrLen("a"), 1u);
  EXPECT_EQ(CStrLen("uid_map 0 0 1"), 13u);
}

TEST(WriteFileAtTest, WritesTheWholeTextOrSaysWhy) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string path = dir + "/child_step_write";
  { std::ofstream(path) << ""; }
  const int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dirfd, 0);
  EXPECT_EQ(WriteFileAt(dirfd, "child_step_write", "0 1000 1\n"), 0);
  std::stringstream got;
  got << std::ifstream(path).rdbuf();
  EXPECT_EQ(got.str(), "0 1000 1\n");
  EXPECT_EQ(WriteFileAt(dirfd, "missing/file", "x"), ENOENT);
  close(dirfd);
}

TEST(MirrorStatusTest, EndsWithTheSameExitCodeOrSignal) {
  for (int code : {0, 3, 255}) {
    absl::StatusOr<ChildOutcome> out = RunInForkedChild([code] {
      MirrorStatus(code << 8);  // A wait status for exit(code).
      return 99;
    });
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->Exited(code)) << out->ToString();
  }
  // A signal the stand-in itself ignores and blocks still ends it, as it ended the command.
  absl::StatusOr<ChildOutcome> out = RunInForkedChild([] {
    signal(SIGTERM, SIG_IGN);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, nullptr);
    MirrorStatus(SIGTERM);  // A wait status for death by SIGTERM.
    return 99;
  });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->term_signal, SIGTERM) << out->ToString();
}

}  // namespace
}  // namespace sandbox::linux_layers
