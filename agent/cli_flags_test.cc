#include "agent/cli_flags.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FlagParserTest : public ::testing::Test {
 protected:
  FlagParserTest() : flags_("prog [flags]", "about") {
    flags_.AddString("mode", "good", "mode");
    flags_.AddInt("max-steps", 8, "steps");
    flags_.AddBool("append-trace", "append");
  }
  absl::StatusOr<std::vector<std::string>> Parse(std::vector<std::string> args) {
    args.insert(args.begin(), "prog");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return flags_.Parse(static_cast<int>(argv.size()), argv.data());
  }
  FlagParser flags_;
};

TEST_F(FlagParserTest, DefaultsApplyWhenAbsent) {
  ASSERT_TRUE(Parse({}).ok());
  EXPECT_EQ(flags_.GetString("mode"), "good");
  EXPECT_EQ(flags_.GetInt("max-steps"), 8);
  EXPECT_FALSE(flags_.GetBool("append-trace"));
  EXPECT_FALSE(flags_.IsSet("mode"));
}

TEST_F(FlagParserTest, EqualsAndSeparateValuesAndUnderscores) {
  auto pos = Parse({"--mode", "loop", "--max_steps=4", "--append-trace", "x", "--", "--y"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(flags_.GetString("mode"), "loop");
  EXPECT_EQ(flags_.GetInt("max-steps"), 4);
  EXPECT_TRUE(flags_.GetBool("append-trace"));
  EXPECT_THAT(*pos, ElementsAre("x", "--y"));
}

TEST_F(FlagParserTest, ErrorsAreOneLineAndNameTheFlag) {
  auto s = Parse({"--bogus"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("--bogus"));
  EXPECT_THAT(std::string(Parse({"--max-steps=four"}).status().message()), HasSubstr("integer"));
  EXPECT_THAT(std::string(Parse({"--mode"}).status().message()), HasSubstr("needs a value"));
  EXPECT_FALSE(Parse({"-x"}).ok());
  EXPECT_FALSE(Parse({"--append-trace=maybe"}).ok());
  for (const auto& args : std::vector<std::vector<std::string>>{{"--bogus"}, {"--mode"}}) {
    EXPECT_EQ(std::string(Parse(args).status().message()).find('\n'), std::string::npos);
  }
}

TEST_F(FlagParserTest, HelpIsRecognised) {
  ASSERT_TRUE(Parse({"--help"}).ok());
  EXPECT_TRUE(flags_.help());
  EXPECT_THAT(flags_.Usage(), HasSubstr("--max-steps"));
}

// The whole usage text: flags in the order they were added, =VALUE and defaults only where a flag
// takes a value, and --help last.
TEST_F(FlagParserTest, UsageListsFlagsInOrderWithDefaults) {
  flags_.AddString("trace", "", "where");
  EXPECT_EQ(flags_.Usage(),
            "usage: prog [flags]\n\nabout\n\nflags:\n"
            "  --mode=VALUE\n      mode (default: good)\n"
            "  --max-steps=VALUE\n      steps (default: 8)\n"
            "  --append-trace\n      append\n"
            "  --trace=VALUE\n      where\n"
            "  --help\n      print this text and exit 0\n");
}

TEST_F(FlagParserTest, ShortOrBareArgumentsArePositional) {
  auto pos = Parse({"-", "x", "--max-steps", "3", "--", "-h", "--mode"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, ElementsAre("-", "x", "-h", "--mode"));
  EXPECT_EQ(flags_.GetInt("max-steps"), 3);
  EXPECT_FALSE(flags_.help());
  EXPECT_TRUE(Parse({"-h"}).ok());
  EXPECT_TRUE(flags_.help());
}

TEST(ResolveUserPathTest, RelativePathsFollowTheCurrentDirectoryOutsideBazelRun) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(ResolveUserPath("t.jsonl"), std::string(cwd) + "/t.jsonl");
  setenv("BUILD_WORKING_DIRECTORY", "", 1);
  EXPECT_EQ(ResolveUserPath("t.jsonl"), std::string(cwd) + "/t.jsonl");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

TEST(ResolveUserPathTest, RelativePathsFollowBuildWorkingDirectory) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/repo", 1);
  EXPECT_EQ(ResolveUserPath("t.jsonl"), "/home/me/repo/t.jsonl");
  EXPECT_EQ(ResolveUserPath("/abs/t.jsonl"), "/abs/t.jsonl");
  EXPECT_EQ(ResolveUserPath(""), "");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

}  // namespace
}  // namespace agent
