#include "sandbox/cli/flags.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox::cli {
namespace {

TEST(ParseBytesTest, SuffixesArePowersOf1024) {
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes("64K"), 64u << 10);
  EXPECT_EQ(*ParseBytes("64k"), 64u << 10);
  EXPECT_EQ(*ParseBytes("64M"), 64u << 20);
  EXPECT_EQ(*ParseBytes("2G"), 2ull << 30);
  EXPECT_EQ(*ParseBytes("1T"), 1ull << 40);
  EXPECT_EQ(*ParseBytes("0"), 0u);
}

TEST(ParseBytesTest, RejectsWhatIsNotAByteCount) {
  for (const char* bad : {"", "M", "-1", "1.5M", "12X", "ten", " 1", "1 ", "99999999999999999999",
                          "17179869184G"}) {
    absl::StatusOr<uint64_t> parsed = ParseBytes(bad);
    EXPECT_FALSE(parsed.ok()) << "'" << bad << "'";
    if (!parsed.ok()) {
      EXPECT_EQ(CodeOf(parsed.status()), ErrorCode::kEINVAL);
    }
  }
}

TEST(ParseSecondsTest, PositiveFractionsOnly) {
  EXPECT_EQ(*ParseSeconds("0.5"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseSeconds("30"), absl::Seconds(30));
  EXPECT_EQ(*ParseSeconds("1e9"), absl::Seconds(1000000000)) << "the largest: about 31 years";
  EXPECT_FALSE(ParseSeconds("1000000000.5").ok());
  for (const char* bad : {"", "0", "-1", "abc", "nan", "inf", "1e100"}) {
    EXPECT_FALSE(ParseSeconds(bad).ok()) << "'" << bad << "'";
  }
}

TEST(ParseCommandLineTest, FlagsThenCommand) {
  absl::StatusOr<CliOptions> options = ParseCommandLine(
      {"--timeout=1.5", "--cpu", "3", "--memory=64M", "--fsize=1K", "--nofile=32", "--nproc=10",
       "--output-cap=2M", "--env=A=1", "--env", "B=x=y", "--inherit-env", "--stdin=in.txt",
       "--json", "--workspace=/tmp", "--cwd=sub", "--grace=0", "--", "ls", "--json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->timeout, absl::Milliseconds(1500));
  EXPECT_EQ(options->grace, absl::ZeroDuration());
  EXPECT_EQ(options->limits.cpu_seconds, 3u);
  EXPECT_EQ(options->limits.address_space_bytes, 64u << 20);
  EXPECT_EQ(options->limits.file_size_bytes, 1024u);
  EXPECT_EQ(options->limits.open_files, 32u);
  EXPECT_EQ(options->limits.processes, 10u);
  EXPECT_EQ(options->output_cap, 2u << 20);
  ASSERT_EQ(options->env.size(), 2u);
  EXPECT_EQ(options->env[1].first, "B");
  EXPECT_EQ(options->env[1].second, "x=y");
  EXPECT_TRUE(options->inherit_env);
  EXPECT_EQ(options->stdin_file, "in.txt");
  EXPECT_TRUE(options->json);
  EXPECT_EQ(options->workspace, "/tmp");
  EXPECT_EQ(options->cwd, "sub");
  EXPECT_EQ(options->command, (std::vector<std::string>{"ls", "--json"}));
}

TEST(ParseCommandLineTest, IsolationFlags) {
  absl::StatusOr<CliOptions> o = ParseCommandLine(
      {"--isolate=all", "--no-isolate", "netns", "--require=landlock,seccomp", "--allow-network",
       "--seccomp=strict", "--cgroup-memory=64M", "--cgroup-pids=32", "--cgroup-cpu=500", "--", "make"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->isolation.isolate, "all");
  EXPECT_EQ(o->isolation.no_isolate, "netns");
  EXPECT_EQ(o->isolation.require, "landlock,seccomp");
  EXPECT_TRUE(o->isolation.allow_network);
  EXPECT_EQ(o->isolation.seccomp, "strict");
  EXPECT_EQ(o->isolation.memory_bytes, 64u << 20);
  EXPECT_EQ(o->isolation.pids, 32u);
  EXPECT_EQ(o->isolation.cpu_millis, 500u);
  EXPECT_FALSE(ParseCommandLine({"--cgroup-pids=0", "--", "true"}).ok());
  EXPECT_FALSE(ParseCommandLine({"--cgroup-memory=lots", "--", "true"}).ok());
}

TEST(ParseCommandLineTest, CommandStartsAtTheFirstNonFlag) {
  absl::StatusOr<CliOptions> options = ParseCommandLine({"--json", "echo", "--cpu=1"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, (std::vector<std::string>{"echo", "--cpu=1"}));
  EXPECT_EQ(options->limits.cpu_seconds, 10u);  // The default, untouched.
}

TEST(ParseCommandLineTest, UnlimitedClearsALimit) {
  absl::StatusOr<CliOptions> options =
      ParseCommandLine({"--cpu=unlimited", "--fsize=unlimited", "--nofile=unlimited", "true"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_FALSE(options->limits.cpu_seconds.has_value());
  EXPECT_FALSE(options->limits.file_size_bytes.has_value());
  EXPECT_FALSE(options->limits.open_files.has_value());
}

TEST(ParseCommandLineTest, BadFlagsGiveOneLineNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bogus", "ls"}, "--bogus"},
      {{"-x", "ls"}, "-x"},
      {{"--timeout=abc", "ls"}, "--timeout"},
      {{"--timeout=0", "ls"}, "--timeout"},
      {{"--cpu=0", "ls"}, "--cpu"},
      {{"--cpu=1.5", "ls"}, "--cpu"},
      {{"--nofile=8K", "ls"}, "--nofile"},
      {{"--memory=12X", "ls"}, "--memory"},
      {{"--env=NOEQUALS", "ls"}, "--env"},
      {{"--env==v", "ls"}, "--env"},
      {{"--cgroup-pids=0", "ls"}, "--cgroup-pids"},
      {{"--cgroup-cpu=0", "ls"}, "--cgroup-cpu"},
      {{"--cgroup-cpu=x", "ls"}, "--cgroup-cpu"},
      {{"--cwd"}, "--cwd: needs a value (--cwd=REL)"},
      {{"--cwd", "sub"}, "no command"},  // The value is taken, then the command is missing.
      {{"--json=yes", "ls"}, "--json"},
      {{"--timeout"}, "--timeout"},
      {{"--json"}, "no command"},
      {{}, "no command"},
  };
  for (const auto& [args, needle] : cases) {
    absl::StatusOr<CliOptions> options = ParseCommandLine(args);
    ASSERT_FALSE(options.ok()) << needle;
    EXPECT_EQ(CodeOf(options.status()), ErrorCode::kEINVAL);
    EXPECT_TRUE(absl::StrContains(options.status().message(), needle))
        << options.status().message();
    EXPECT_FALSE(absl::StrContains(options.status().message(), "\n"));
  }
}

// Each flag's help starts at column 24 (or one space after a long synopsis) and wraps at 100
// columns onto lines indented to column 24, word by word, never earlier than it must; only a single
// word wider than the space may pass column 100.
TEST(UsageTextTest, FlagHelpIsWrappedAtOneHundredColumns) {
  constexpr size_t kColumn = 24, kWidth = 100;
  const std::vector<std::string> lines = absl::StrSplit(UsageText(), '\n');
  const std::string indent(kColumn, ' ');
  for (const FlagDoc& flag : AllFlags()) {
    const std::string synopsis =
        absl::StrCat("  ", flag.name, flag.value.empty() ? "" : "=", flag.value);
    size_t first = 0;
    while (first < lines.size() && !absl::StartsWith(lines[first], synopsis + " ")) ++first;
    ASSERT_LT(first, lines.size()) << synopsis;
    const size_t start = std::max(synopsis.size() + 1, kColumn);
    ASSERT_GT(lines[first].size(), start) << lines[first];
    EXPECT_EQ(lines[first].substr(0, start), synopsis + std::string(start - synopsis.size(), ' '))
        << lines[first];
    EXPECT_NE(lines[first][start], ' ') << lines[first];
    std::vector<std::string> block = {lines[first].substr(start)};
    for (size_t i = first + 1; i < lines.size() && absl::StartsWith(lines[i], indent); ++i) {
      const std::string rest = lines[i].substr(kColumn);
      ASSERT_FALSE(rest.empty() || rest[0] == ' ') << lines[i];
      // Wrapped only because the word did not fit on the line above.
      const size_t first_word = rest.find(' ') == std::string::npos ? rest.size() : rest.find(' ');
      EXPECT_GT(lines[i - 1].size() + 1 + first_word, kWidth) << lines[i - 1] << "\n" << lines[i];
      block.push_back(rest);
    }
    EXPECT_EQ(absl::StrJoin(block, " "), flag.help) << flag.name;
  }
  for (const std::string& line : lines) {
    if (line.size() <= kWidth) continue;
    EXPECT_TRUE(absl::StartsWith(line, indent) &&
                line.substr(kColumn).find(' ') == std::string::npos)
        << line.size() << " columns: " << line;
  }
}

TEST(ParseCommandLineTest, HelpNeedsNoCommandAndListsEveryFlag) {
  absl::StatusOr<CliOptions> options = ParseCommandLine({"--help"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->help);
  const std::string usage = UsageText();
  EXPECT_GE(AllFlags().size(), 15u);
  for (const FlagDoc& flag : AllFlags()) {
    EXPECT_TRUE(absl::StrContains(usage, flag.name)) << flag.name;
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    // Every documented flag is accepted by the parser.
    std::vector<std::string> args = {flag.value.empty() ? std::string(flag.name)
                                                        : absl::StrCat(flag.name, "=1")};
    if (flag.name == "--env") args = {"--env=A=1"};
    args.push_back("true");
    EXPECT_TRUE(ParseCommandLine(args).ok()) << flag.name;
  }
  EXPECT_TRUE(absl::StrContains(usage, "124"));
  EXPECT_TRUE(absl::StrContains(usage, "125"));
}

class BuildRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = absl::StrCat(getenv("TEST_TMPDIR"), "/ws.XXXXXX");
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    char real[PATH_MAX];
    ASSERT_NE(realpath(templ.c_str(), real), nullptr);
    root_ = real;
    ASSERT_EQ(mkdir((root_ + "/sub").c_str(), 0755), 0);
    ASSERT_EQ(symlink("/", (root_ + "/escape").c_str()), 0);
  }

  absl::StatusOr<RunRequest> Build(std::vector<std::string> args) {
    args.push_back("true");
    absl::StatusOr<CliOptions> options = ParseCommandLine(args);
    if (!options.ok()) return options.status();
    return BuildRequest(*options, root_, {{"PARENT", "1"}},
                        [] { return absl::StatusOr<std::string>("from stdin"); });
  }

  std::string root_;
};

TEST_F(BuildRequestTest, DefaultsToTheCurrentDirectoryAndMinimalEnv) {
  absl::StatusOr<RunRequest> request = Build({"--env=A=1"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->cwd, root_);
  ASSERT_TRUE(request->env.has_value());
  EXPECT_EQ(request->env->count("PARENT"), 0u);
  EXPECT_EQ(request->env->at("A"), "1");
  EXPECT_EQ(request->env->at("HOME"), root_);
  EXPECT_FALSE(request->stdin_data.has_value());
}

TEST_F(BuildRequestTest, InheritEnvStartsFromTheParent) {
  absl::StatusOr<RunRequest> request = Build({"--inherit-env", "--env=PARENT=2"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(*request->env, (std::map<std::string, std::string>{{"PARENT", "2"}}));
}

TEST_F(BuildRequestTest, CwdStaysInsideTheWorkspace) {
  absl::StatusOr<RunRequest> request = Build({"--workspace", root_, "--cwd=sub"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->cwd, root_ + "/sub");
  EXPECT_EQ(CodeOf(Build({"--cwd=../sub"}).status()), ErrorCode::kEINVAL);
  EXPECT_EQ(CodeOf(Build({"--cwd=/tmp"}).status()), ErrorCode::kEINVAL);
  EXPECT_EQ(CodeOf(Build({"--cwd=missing"}).status()), ErrorCode::kENOENT);
  EXPECT_EQ(CodeOf(Build({"--cwd=escape"}).status()), ErrorCode::kEPERM);
  EXPECT_EQ(CodeOf(Build({"--workspace=/no/such/dir"}).status()), ErrorCode::kENOENT);
}

TEST_F(BuildRequestTest, StdinFromFileOrOurStdin) {
  const std::string file = root_ + "/input.txt";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("file body", f);
  fclose(f);
  absl::StatusOr<RunRequest> request = Build({"--stdin=" + file});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->stdin_data, "file body");
  request = Build({"--stdin=-"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->stdin_data, "from stdin");
  EXPECT_EQ(CodeOf(Build({"--stdin=" + root_ + "/missing"}).status()), ErrorCode::kENOENT);
}

TEST(ExitStatusTest, LikeTimeout1) {
  RunResult result;
  result.exit_code = 3;
  EXPECT_EQ(ExitStatusFor(result), 3);
  result.exit_code.reset();
  result.term_signal = 9;
  EXPECT_EQ(ExitStatusFor(result), 137);
  result.timed_out = true;
  EXPECT_EQ(ExitStatusFor(result), 124);
}

}  // namespace
}  // namespace sandbox::cli
