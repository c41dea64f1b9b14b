#include "agent/builtin_tools.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/workspace.h"

namespace agent {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class BuiltinToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(base.c_str(), 0755), 0);
    root_ = base + "/ws";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    WriteRaw(base + "/secret.txt", "top secret\n");
    WriteRaw(root_ + "/calc.sh", "add() {\n  echo $((a - b))\n}\n");
    auto ws = sandbox::Workspace::Open(root_, AgentWorkspaceOptions());
    ASSERT_TRUE(ws.ok()) << ws.status();
    ws_.emplace(*std::move(ws));
    MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "echo all good"});
  }

  void MakeRegistry(std::set<std::string> scopes, std::vector<std::string> test_argv,
                    uint64_t log_cap = 1 << 20) {
    ToolEnv env;
    env.workspace = &*ws_;
    env.test.argv = std::move(test_argv);
    env.test.timeout = absl::Seconds(20);
    env.test.output_cap = 64;
    env.test.log_cap = log_cap;
    registry_.emplace(env, std::move(scopes));
    ASSERT_TRUE(RegisterBuiltinTools(*registry_).ok());
  }

  static void WriteRaw(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
  }
  std::string ReadRaw(const std::string& rel) {
    std::ifstream in(root_ + "/" + rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  json Call(const std::string& tool, const json& args) {
    json env = registry_->Call(state_, tool, args);
    state_.AddToolResult(tool, args, env);
    return env;
  }
  static std::string Code(const json& env) {
    return env["error"].is_object() ? env["error"]["code"].get<std::string>() : "OK";
  }

  std::string root_;
  std::optional<sandbox::Workspace> ws_;
  std::optional<Registry> registry_;
  State state_;
};

// The tool contract a model is given (names, schemas with their limits, effects, idempotency,
// scopes) and each tool's static cost, pinned: a change to what the model may send or what a call
// costs the budget must be deliberate. On a deliberate change, the test writes the new contract
// to its undeclared outputs (bazel-testlogs/agent/builtin_tools_test/test.outputs/) to copy over
// agent/testdata/builtin_tools_contract.json.
TEST_F(BuiltinToolsTest, ContractMatchesTheGolden) {
  json contract = registry_->Describe();
  for (json& tool : contract) {
    const ToolSpec* spec = registry_->Find(tool["name"]);
    ASSERT_NE(spec, nullptr);
    tool["cost"] = spec->cost;
    tool["has_precondition"] = static_cast<bool>(spec->precondition);
  }
  std::ifstream in("agent/testdata/builtin_tools_contract.json");
  ASSERT_TRUE(in) << "agent/testdata/builtin_tools_contract.json is missing from the runfiles";
  const json golden = json::parse(in);
  if (contract != golden) {
    if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
      std::ofstream(absl::StrCat(out, "/builtin_tools_contract.json")) << contract.dump(2) << "\n";
    }
  }
  EXPECT_EQ(contract, golden) << contract.dump(2);
}

TEST_F(BuiltinToolsTest, FsReadReturnsContentAndAHashRef) {
  json env = Call("fs.read", {{"path", "calc.sh"}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"], ReadRaw("calc.sh"));
  EXPECT_EQ(env["data"]["lines"], 3);
  EXPECT_EQ(env["refs"], json::parse(absl::StrCat(R"([{"path": "calc.sh", "sha256": ")",
                                                  Sha256Hex(ReadRaw("calc.sh")), "\"}]")));
}

TEST_F(BuiltinToolsTest, FsReadSaysWhetherTheContentIsWellFormedUtf8AndCountsLines) {
  struct Case {
    std::string content;
    bool utf8;
    int lines;
  };
  const Case cases[] = {
      {"", true, 0},
      {"a", true, 1},
      {"a\n", true, 1},
      {"a\nb", true, 2},
      {"\n\n", true, 2},
      {"\xc2\x80\xdf\xbf", true, 1},           // U+0080 and U+07FF.
      {"\xe0\xa0\x80\xef\xbf\xbf", true, 1},   // U+0800 and U+FFFF.
      {"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", true, 1},  // U+10000 and U+10FFFF.
      {"x\xe4\xb8\xad\n", true, 1},             // A Chinese character.
      {"\xc1\xbf", false, 1},                   // Overlong.
      {"\xed\xa0\x80", false, 1},               // A surrogate: JSON would carry U+FFFD instead.
      {"\xf5\x80\x80\x80", false, 1},           // Above U+10FFFF.
      {"\xe4\xb8", false, 1},                   // Cut short at the end of the file.
      {"\xe4\xb8x", false, 1},                  // A continuation byte missing.
      {"\x80", false, 1},                       // A continuation byte on its own.
  };
  for (const Case& c : cases) {
    WriteRaw(root_ + "/t.txt", c.content);
    json env = Call("fs.read", {{"path", "t.txt"}});
    ASSERT_EQ(Code(env), "OK") << env.dump();
    EXPECT_EQ(env["data"]["utf8"], c.utf8) << env["data"].dump();
    EXPECT_EQ(env["data"]["lines"], c.lines) << env["data"].dump();
  }
}

TEST_F(BuiltinToolsTest, FsReadOverTheCapIsEfbigSuggestingReadRange) {
  WriteRaw(root_ + "/big.txt", std::string(kReadCap + 1, 'x'));
  json env = Call("fs.read", {{"path", "big.txt"}});
  EXPECT_EQ(Code(env), "EFBIG");
  EXPECT_EQ(env["error"]["suggested_action"], "read_range");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("fs.read_range"));
  WriteRaw(root_ + "/edge.txt", std::string(kReadCap, 'x'));
  EXPECT_EQ(Code(Call("fs.read", {{"path", "edge.txt"}})), "OK");
}

TEST_F(BuiltinToolsTest, FsReadRefusesEscapesAndReportsMissingFiles) {
  json env = Call("fs.read", {{"path", "../secret.txt"}});
  EXPECT_EQ(Code(env), "EPERM");
  EXPECT_EQ(env["error"]["retryable"], false);
  EXPECT_THAT(env.dump(), ::testing::Not(HasSubstr("top secret")));
  EXPECT_EQ(Code(Call("fs.read", {{"path", "/etc/passwd"}})), "EPERM");
  EXPECT_EQ(Code(Call("fs.read", {{"path", "nope.txt"}})), "ENOENT");
  EXPECT_EQ(Code(Call("fs.read", {{"path", ""}})), "EINVAL");
  EXPECT_EQ(Code(Call("fs.read", {{"file", "calc.sh"}})), "EINVAL");
}

TEST_F(BuiltinToolsTest, FsReadRangeBytes) {
  json env = Call("fs.read_range", {{"path", "calc.sh"}, {"offset", 2}, {"length", 4}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"], "d() ");
  EXPECT_EQ(env["data"]["eof"], false);
}

TEST_F(BuiltinToolsTest, FsReadRangeLinesInAFileTooBigForFsRead) {
  std::string big;
  for (int i = 1; i <= 40000; ++i) absl::StrAppend(&big, "line ", i, "\n");
  ASSERT_GT(big.size(), kReadCap);
  WriteRaw(root_ + "/big.txt", big);
  json env = Call("fs.read_range", {{"path", "big.txt"}, {"start_line", 39999}, {"end_line", 40005}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"], "line 39999\nline 40000\n");
  EXPECT_EQ(env["data"]["end_line"], 40000);
  EXPECT_EQ(env["data"]["eof"], true);
  env = Call("fs.read_range", {{"path", "big.txt"}, {"start_line", 2}, {"end_line", 3}});
  EXPECT_EQ(env["data"]["content"], "line 2\nline 3\n");
}

TEST_F(BuiltinToolsTest, FsReadRangeStartsAtTheFirstByteAndLine) {
  json env = Call("fs.read_range", {{"path", "calc.sh"}, {"length", 3}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"], "add") << "offset defaults to 0";
  env = Call("fs.read_range", {{"path", "calc.sh"}, {"start_line", 1}, {"end_line", 1}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"], "add() {\n") << "a range of one line";
  EXPECT_EQ(env["data"]["end_line"], 1);
  EXPECT_EQ(env["data"]["eof"], false) << "lines 2 and 3 are left";
}

TEST_F(BuiltinToolsTest, FsReadRangeLinesDefaultToTwoHundred) {
  std::string text;
  for (int i = 1; i <= 300; ++i) absl::StrAppend(&text, i, "\n");
  WriteRaw(root_ + "/300.txt", text);
  json env = Call("fs.read_range", {{"path", "300.txt"}, {"start_line", 1}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["end_line"], 200);
  EXPECT_THAT(env["data"]["content"].get<std::string>(), ::testing::EndsWith("\n199\n200\n"));
  EXPECT_EQ(env["data"]["eof"], false);
}

TEST_F(BuiltinToolsTest, FsReadRangeLinesStopAtTheReadCap) {
  std::string big;
  for (int i = 1; i <= 40000; ++i) absl::StrAppend(&big, "line ", i, "\n");
  WriteRaw(root_ + "/big.txt", big);
  json env = Call("fs.read_range", {{"path", "big.txt"}, {"start_line", 1}, {"end_line", 40000}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["content"].get<std::string>(), big.substr(0, kReadCap));
  EXPECT_EQ(env["data"]["truncated"], true);
  EXPECT_EQ(env["data"]["eof"], false);
}

TEST_F(BuiltinToolsTest, FsReadRangeRejectsMixedModesAndPastTheEnd) {
  EXPECT_EQ(Code(Call("fs.read_range", {{"path", "calc.sh"}, {"offset", 0}, {"start_line", 1}})),
            "EINVAL");
  EXPECT_EQ(Code(Call("fs.read_range", {{"path", "calc.sh"}})), "EINVAL");
  json env = Call("fs.read_range", {{"path", "calc.sh"}, {"start_line", 9}});
  EXPECT_EQ(Code(env), "EINVAL");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("has 3 lines"));
  EXPECT_EQ(Code(Call("fs.read_range", {{"path", "calc.sh"}, {"start_line", 0}})), "EINVAL");
  EXPECT_EQ(Code(Call("fs.read_range", {{"path", "../secret.txt"}, {"offset", 0}})), "EPERM");
}

TEST_F(BuiltinToolsTest, FsListLeavesOutGitAndAgentDirectories) {
  ASSERT_EQ(mkdir((root_ + "/.git").c_str(), 0755), 0);
  WriteRaw(root_ + "/.git/HEAD", "ref\n");
  ASSERT_EQ(mkdir((root_ + "/.agent").c_str(), 0755), 0);
  WriteRaw(root_ + "/.agent/x.log", "log\n");
  ASSERT_EQ(mkdir((root_ + "/src").c_str(), 0755), 0);
  WriteRaw(root_ + "/src/a.sh", "a\n");
  json env = Call("fs.list", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["files"],
            json::parse(R"([{"path": "calc.sh", "size": 28}, {"path": "src/a.sh", "size": 2}])"));
  EXPECT_EQ(env["data"]["count"], 2);
  EXPECT_EQ(env["data"]["truncated"], false);
  env = Call("fs.list", {{"prefix", "src"}});
  EXPECT_EQ(env["data"]["count"], 1);
  EXPECT_EQ(Code(Call("fs.list", {{"prefix", "../"}})), "EPERM");
}

TEST_F(BuiltinToolsTest, FsListPrefixIsADirectoryOrTheFileItself) {
  ASSERT_EQ(mkdir((root_ + "/src").c_str(), 0755), 0);
  WriteRaw(root_ + "/src/a.sh", "a\n");
  WriteRaw(root_ + "/srcx.sh", "x\n");
  json env = Call("fs.list", {{"prefix", "src"}});
  EXPECT_EQ(env["data"]["files"], json::parse(R"([{"path": "src/a.sh", "size": 2}])"))
      << "srcx.sh only starts with the same letters";
  env = Call("fs.list", {{"prefix", "calc.sh"}});
  EXPECT_EQ(env["data"]["files"], json::parse(R"([{"path": "calc.sh", "size": 28}])"));
}

TEST_F(BuiltinToolsTest, FsListShowsTwoThousandFilesAndCountsTheRest) {
  ASSERT_EQ(mkdir((root_ + "/many").c_str(), 0755), 0);
  for (int i = 0; i < 1999; ++i) WriteRaw(absl::StrCat(root_, "/many/", i), "");
  json env = Call("fs.list", json::object());  // calc.sh and 1,999 more: exactly the limit
  EXPECT_EQ(env["data"]["files"].size(), 2000u);
  EXPECT_EQ(env["data"]["count"], 2000);
  EXPECT_EQ(env["data"]["truncated"], false);
  WriteRaw(root_ + "/many/one-more", "");
  env = Call("fs.list", json::object());
  EXPECT_EQ(env["data"]["files"].size(), 2000u);
  EXPECT_EQ(env["data"]["count"], 2001);
  EXPECT_EQ(env["data"]["truncated"], true);
}

TEST_F(BuiltinToolsTest, PatchApplyReplacesTheUniqueOccurrenceAndBumpsTheWorld) {
  json env = Call("patch.apply", {{"path", "calc.sh"}, {"old", "a - b"}, {"new", "a + b"}});
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(ReadRaw("calc.sh"), "add() {\n  echo $((a + b))\n}\n");
  EXPECT_EQ(state_.world.version, 1u);
  EXPECT_EQ(env["data"]["world_version"], 1);
  EXPECT_EQ(env["data"]["replacements"], 1);
  EXPECT_EQ(env["refs"][0]["sha256"], Sha256Hex(ReadRaw("calc.sh")));
}

TEST_F(BuiltinToolsTest, PatchApplyZeroMatchesIsEnomatchAndChangesNothing) {
  json env = Call("patch.apply", {{"path", "calc.sh"}, {"old", "a * b"}, {"new", "a + b"}});
  EXPECT_EQ(Code(env), "ENOMATCH");
  EXPECT_EQ(env["error"]["suggested_action"], "read_file");
  EXPECT_EQ(ReadRaw("calc.sh"), "add() {\n  echo $((a - b))\n}\n");
  EXPECT_EQ(state_.world.version, 0u);
}

TEST_F(BuiltinToolsTest, PatchApplyManyMatchesIsEambiguousWithTheCount) {
  json env = Call("patch.apply", {{"path", "calc.sh"}, {"old", "a"}, {"new", "x"}});
  EXPECT_EQ(Code(env), "EAMBIGUOUS");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("occurs 2 times"));
  EXPECT_EQ(state_.world.version, 0u);
  // Overlapping placements count: "aa" sits twice in "aaa".
  WriteRaw(root_ + "/a.txt", "aaa");
  env = Call("patch.apply", {{"path", "a.txt"}, {"old", "aa"}, {"new", "b"}});
  EXPECT_EQ(Code(env), "EAMBIGUOUS");
  EXPECT_EQ(ReadRaw("a.txt"), "aaa");
}

TEST_F(BuiltinToolsTest, PatchApplyRefusesNoOpsEscapesAndMissingFiles) {
  EXPECT_EQ(Code(Call("patch.apply", {{"path", "calc.sh"}, {"old", "a"}, {"new", "a"}})), "EINVAL");
  EXPECT_EQ(Code(Call("patch.apply", {{"path", "../secret.txt"}, {"old", "top"}, {"new", "x"}})),
            "EPERM");
  EXPECT_EQ(Code(Call("patch.apply", {{"path", "nope.sh"}, {"old", "a"}, {"new", "b"}})), "ENOENT");
  EXPECT_EQ(Code(Call("patch.apply", {{"path", "calc.sh"}, {"old", ""}, {"new", "b"}})), "EINVAL");
}

TEST_F(BuiltinToolsTest, PatchApplyNeedsTheWriteScope) {
  MakeRegistry({"workspace:read"}, {});
  json env = Call("patch.apply", {{"path", "calc.sh"}, {"old", "a - b"}, {"new", "a + b"}});
  EXPECT_EQ(Code(env), "EPERM");
  EXPECT_EQ(ReadRaw("calc.sh"), "add() {\n  echo $((a - b))\n}\n");
}

TEST_F(BuiltinToolsTest, TestRunPassingWritesALogOutsideTheListing) {
  json env = Call("test.run", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["passed"], true);
  EXPECT_EQ(env["data"]["exit_code"], 0);
  EXPECT_EQ(env["data"]["timed_out"], false);
  EXPECT_EQ(env["data"]["stdout"], "all good\n");
  EXPECT_EQ(env["data"]["truncated"], false);
  const std::string log_path = env["refs"][0]["path"];
  EXPECT_THAT(log_path, ::testing::MatchesRegex("\\.agent/logs/test-[0-9a-f]{16}\\.log"))
      << "named by the first 16 hex digits of the log's sha256";
  EXPECT_EQ(log_path.substr(17, 16), Sha256Hex(ReadRaw(log_path)).substr(0, 16));
  EXPECT_EQ(env["refs"][0]["sha256"], Sha256Hex(ReadRaw(log_path)));
  EXPECT_THAT(ReadRaw(log_path),
              ::testing::EndsWith("== stdout (9 bytes) ==\nall good\n== stderr (0 bytes) ==\n"));
  json list = Call("fs.list", json::object());
  EXPECT_THAT(list.dump(), ::testing::Not(HasSubstr(".agent")));
  EXPECT_EQ(state_.world.version, 0u);  // The log is not a change to the project.
}

TEST_F(BuiltinToolsTest, TestRunFailingReportsTheExitStatus) {
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "echo broken >&2; exit 3"});
  json env = Call("test.run", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["passed"], false);
  EXPECT_EQ(env["data"]["exit_code"], 3);
  EXPECT_EQ(env["data"]["stderr"], "broken\n");
}

TEST_F(BuiltinToolsTest, TestRunCapsOutputAndKeepsTheFullLog) {
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "i=0; while [ $i -lt 100 ]; do "
                                                  "echo line-$i; i=$((i+1)); done"});
  json env = Call("test.run", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["truncated"], true);
  EXPECT_LE(env["data"]["stdout"].get<std::string>().size(), 64u);
  EXPECT_GT(env["data"]["stdout_bytes"].get<uint64_t>(), 64u);
  EXPECT_THAT(ReadRaw(env["refs"][0]["path"]), HasSubstr("line-99\n"));
}

// The summary shown to the model is cut to output_cap without splitting a character: "a" then
// two-byte characters put byte 64 in the middle of the 32nd one, so 63 bytes are kept.
TEST_F(BuiltinToolsTest, TestRunCutsOutputAtACharacterBoundary) {
  std::string script = "{ printf a";
  for (int i = 0; i < 40; ++i) script += "; printf '\\303\\251'";
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", script + "; } | tee /dev/stderr"});
  json env = Call("test.run", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  std::string expected = "a";
  for (int i = 0; i < 31; ++i) expected += "\xc3\xa9";
  EXPECT_EQ(env["data"]["stdout"], expected);
  EXPECT_EQ(env["data"]["stderr"], expected);
  EXPECT_EQ(env["data"]["truncated"], true);
  EXPECT_EQ(env["data"]["stdout_bytes"], 81);
  EXPECT_EQ(env["data"]["log_complete"], true);
  // The log keeps every byte of both streams, each ending in a newline.
  std::string full = "a";
  for (int i = 0; i < 40; ++i) full += "\xc3\xa9";
  EXPECT_THAT(ReadRaw(env["refs"][0]["path"]),
              ::testing::EndsWith("== stdout (81 bytes) ==\n" + full + "\n== stderr (81 bytes) ==\n" +
                                  full + "\n"));
}

// The log is complete only if the runner kept every byte of both streams.
TEST_F(BuiltinToolsTest, TestRunLogIsIncompleteWhenOneStreamPassedTheLogCap) {
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "echo 0123456789abcdefghij; echo e >&2"},
               /*log_cap=*/16);
  json env = Call("test.run", json::object());
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_EQ(env["data"]["log_complete"], false);
  EXPECT_EQ(env["data"]["truncated"], true);
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "echo o; echo 0123456789abcdefghij >&2"},
               /*log_cap=*/16);
  env = Call("test.run", json::object());
  EXPECT_EQ(env["data"]["log_complete"], false) << "stderr alone past the cap";
}

TEST_F(BuiltinToolsTest, TestRunTimeoutIsReportedNotPassed) {
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "sleep 30"});
  ToolEnv env = registry_->env();
  env.test.timeout = absl::Milliseconds(300);
  registry_.emplace(env, BuiltinScopes());
  ASSERT_TRUE(RegisterBuiltinTools(*registry_).ok());
  json result = Call("test.run", json::object());
  ASSERT_EQ(Code(result), "OK") << result.dump();
  EXPECT_EQ(result["data"]["timed_out"], true);
  EXPECT_EQ(result["data"]["passed"], false);
}

TEST_F(BuiltinToolsTest, TestRunPassesTheLimitsToTheRunnerItIsGiven) {
  sandbox::RunRequest seen;
  BuiltinToolOptions options;
  options.run = [&seen](const sandbox::RunRequest& r) -> absl::StatusOr<sandbox::RunResult> {
    seen = r;
    sandbox::RunResult result;
    result.exit_code = 0;
    result.out.data = "fake\n";
    result.out.total_bytes = 5;
    return result;
  };
  ToolEnv env = registry_->env();
  env.test.timeout = absl::Seconds(7);
  env.test.log_cap = 4096;
  registry_.emplace(env, BuiltinScopes());
  ASSERT_TRUE(RegisterBuiltinTools(*registry_, options).ok());
  json result = Call("test.run", json::object());
  ASSERT_EQ(Code(result), "OK") << result.dump();
  EXPECT_EQ(result["data"]["stdout"], "fake\n");
  EXPECT_EQ(seen.argv, (std::vector<std::string>{"/bin/sh", "-c", "echo all good"}));
  EXPECT_EQ(seen.cwd, ws_->root());
  EXPECT_EQ(seen.wall_timeout, absl::Seconds(7));
  EXPECT_EQ(seen.stdout_cap, 4096u);
  EXPECT_EQ(seen.stderr_cap, 4096u);
}

TEST_F(BuiltinToolsTest, TestRunWithoutACommandIsAPreconditionFailure) {
  MakeRegistry(BuiltinScopes(), {});
  EXPECT_EQ(Code(Call("test.run", json::object())), "EPRECONDITION");
}

TEST_F(BuiltinToolsTest, TestRunMissingProgramIsAnError) {
  MakeRegistry(BuiltinScopes(), {"/nonexistent/program"});
  EXPECT_EQ(Code(Call("test.run", json::object())), "ENOENT");
}

TEST_F(BuiltinToolsTest, TaskFinishNeedsAPassingTestAfterTheLastWrite) {
  json answer = {{"answer", "fixed"}};
  json env = Call("task.finish", answer);
  EXPECT_EQ(Code(env), "EPRECONDITION");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("test.run"));
  EXPECT_FALSE(state_.task.done);

  ASSERT_EQ(Code(Call("test.run", json::object())), "OK");
  ASSERT_EQ(Code(Call("patch.apply", {{"path", "calc.sh"}, {"old", "a - b"}, {"new", "a + b"}})),
            "OK");
  EXPECT_EQ(Code(Call("task.finish", answer)), "EPRECONDITION");  // The pass predates the write.
  EXPECT_FALSE(state_.task.done);

  ASSERT_EQ(Code(Call("test.run", json::object())), "OK");
  env = Call("task.finish", answer);
  ASSERT_EQ(Code(env), "OK") << env.dump();
  EXPECT_TRUE(state_.task.done);
  EXPECT_EQ(state_.task.answer, "fixed");
}

TEST_F(BuiltinToolsTest, TaskFinishAfterAFailingTestIsRefused) {
  MakeRegistry(BuiltinScopes(), {"/bin/sh", "-c", "exit 1"});
  ASSERT_EQ(Code(Call("test.run", json::object())), "OK");
  EXPECT_EQ(Code(Call("task.finish", {{"answer", "x"}})), "EPRECONDITION");
}

}  // namespace
}  // namespace agent
