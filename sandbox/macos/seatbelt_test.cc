// The Seatbelt profile is a pure function of the policy: golden files pin its text, and the
// validation refuses paths that would widen or break it.
#include "sandbox/macos/seatbelt.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox::macos {
namespace {

std::string Golden(const std::string& name) {
  std::ifstream in("sandbox/macos/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SeatbeltProfileTest, NetworkDeniedMatchesGolden) {
  absl::StatusOr<std::string> p = SeatbeltProfile({.workspace = "/Users/dev/ws"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, Golden("network_denied.sb"));
}

TEST(SeatbeltProfileTest, NetworkAllowedWithExtraWritableMatchesGolden) {
  absl::StatusOr<std::string> p = SeatbeltProfile(
      {.workspace = "/private/tmp/ws \"q\"", .extra_writable = {"/private/var/folders/x/T"}, .allow_network = true});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, Golden("network_allowed.sb"));
}

TEST(SeatbeltProfileTest, RejectsPathsThatWouldWidenOrBreakTheProfile) {
  for (std::string bad : std::vector<std::string>{"", "relative/ws", "/", std::string("/ws\0x", 5), "/ws\n(allow default)"}) {
    absl::StatusOr<std::string> p = SeatbeltProfile({.workspace = bad});
    EXPECT_EQ(CodeOf(p.status()), ErrorCode::kEINVAL) << bad;
  }
  EXPECT_FALSE(SeatbeltProfile({.workspace = "/ws", .extra_writable = {"tmp"}}).ok());
}

TEST(SeatbeltProfileTest, QuoteEscapesQuotesAndBackslashes) {
  EXPECT_EQ(SbplQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(SeatbeltProfileTest, SandboxExecArgvWrapsTheCommand) {
  std::vector<std::string> argv = SandboxExecArgv("(version 1)", {"make", "test"});
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/sandbox-exec", "-p", "(version 1)", "--", "make", "test"}));
}

}  // namespace
}  // namespace sandbox::macos
