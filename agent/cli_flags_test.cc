#include "agent/cli_flags.h"

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

TEST(ResolveUserPathTest, RelativePathsFollowBuildWorkingDirectory) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/repo", 1);
  EXPECT_EQ(ResolveUserPath("t.jsonl"), "/home/me/repo/t.jsonl");
  EXPECT_EQ(ResolveUserPath("/abs/t.jsonl"), "/abs/t.jsonl");
  EXPECT_EQ(ResolveUserPath(""), "");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

}  // namespace
}  // namespace agent
