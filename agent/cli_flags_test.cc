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

std::vector<std::string> Words(absl::string_view line) {
  absl::StatusOr<std::vector<std::string>> w = SplitCommandWords(line);
  EXPECT_TRUE(w.ok()) << line << ": " << w.status();
  return w.ok() ? *w : std::vector<std::string>{};
}

std::string SplitError(absl::string_view line) {
  absl::StatusOr<std::vector<std::string>> w = SplitCommandWords(line);
  EXPECT_FALSE(w.ok()) << line;
  return w.ok() ? "" : std::string(w.status().message());
}

TEST(SplitCommandWordsTest, SplitsOnRunsOfWhitespace) {
  EXPECT_THAT(Words("/bin/sh test.sh"), ElementsAre("/bin/sh", "test.sh"));
  EXPECT_THAT(Words("  a \t b\nc  "), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Words("x"), ElementsAre("x"));
}

TEST(SplitCommandWordsTest, QuotesKeepSpacesAndAdjacentPartsJoin) {
  // The case that a plain split on spaces broke: a script given to sh -c.
  EXPECT_THAT(Words("sh -c 'make test && echo ok'"), ElementsAre("sh", "-c", "make test && echo ok"));
  EXPECT_THAT(Words(R"(printf "%s\n" "a b")"), ElementsAre("printf", R"(%s\n)", "a b"));
  EXPECT_THAT(Words(R"(a'b c'"d e"f)"), ElementsAre("ab cd ef"));
  EXPECT_THAT(Words(R"('' "")"), ElementsAre("", "")) << "empty quotes are empty words";
}

TEST(SplitCommandWordsTest, BackslashesAsAShellReadsThem) {
  EXPECT_THAT(Words(R"(a\ b c)"), ElementsAre("a b", "c"));
  EXPECT_THAT(Words(R"('a\b')"), ElementsAre(R"(a\b)")) << "literal inside single quotes";
  EXPECT_THAT(Words(R"("a\"b\\c\$d\`e\x")"), ElementsAre(R"(a"b\c$d`e\x)"))
      << "inside double quotes a backslash goes only before a quote, backslash, dollar or backquote";
  EXPECT_THAT(Words("a\\\nb"), ElementsAre("ab")) << "backslash-newline joins";
  EXPECT_THAT(Words("\"a\\\nb\""), ElementsAre("ab"));
  EXPECT_THAT(Words(R"(\'x)"), ElementsAre("'x"));
}

TEST(SplitCommandWordsTest, NothingIsExpanded) {
  EXPECT_THAT(Words("echo $HOME ~ * `id`"), ElementsAre("echo", "$HOME", "~", "*", "`id`"));
}

TEST(SplitCommandWordsTest, BadLinesAreErrorsThatSayWhere) {
  EXPECT_EQ(SplitError("sh -c 'make"), "the single quote at byte 6 is never closed");
  EXPECT_EQ(SplitError(R"(echo "a\")"), "the double quote at byte 5 is never closed");
  EXPECT_EQ(SplitError(R"(echo a\)"), "the command ends in a lone backslash");
  EXPECT_EQ(SplitError(""), "the command is empty");
  EXPECT_EQ(SplitError(" \t\n"), "the command is empty");
}

}  // namespace
}  // namespace agent
