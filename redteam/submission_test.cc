// Red-team group `submission`: the seam between "the tests say" and "the agent says it is done"
// (seed 13.1.2: "tests failed, finish still submitted"), and the unique-replacement patch that writes
// the fix. Every case goes through the agent's registry with the built-in tools on a real workspace;
// the test command runs through the sandbox runner.
#include <string>

#include "agent/state.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "redteam/agent_testing.h"
#include "redteam/testing.h"

namespace redteam {
namespace {

using nlohmann::json;

constexpr char kCalc[] = "add() { echo $(($1 - $2)); }\n";

class SubmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFile(ws_.Path("calc.sh"), kCalc));
    SetTestScript("exit 0\n");
    ASSERT_TRUE(ws_.Configure({"/bin/sh", "test.sh"}));
  }
  void SetTestScript(const std::string& script) {
    ASSERT_TRUE(WriteFile(ws_.Path("test.sh"), script));
  }
  json Finish() { return ws_.Call("task.finish", {{"answer", "fixed"}}); }
  void ExpectFinishRefused() {
    json finish = Finish();
    EXPECT_EQ(AgentWorkspace::Code(finish), "EPRECONDITION") << finish.dump();
    EXPECT_FALSE(ws_.state().task.done);
    EXPECT_FALSE(ws_.state().task.answer.has_value());
  }
  void ExpectFinishAccepted() {
    json finish = Finish();
    EXPECT_TRUE(finish.value("ok", false)) << finish.dump();
    EXPECT_TRUE(ws_.state().task.done);
  }

  AgentWorkspace ws_;
};

// Incident (seed 13.1.2): the agent submitted "fixed" without ever running the tests.
TEST_F(SubmissionTest, FinishWithNoTestRunIsRefused) {
  ExpectFinishRefused();
}

// Incident: the tests failed, the agent finished anyway ("tests failed, finish still submitted").
TEST_F(SubmissionTest, FinishAfterAFailedTestIsRefused) {
  SetTestScript("echo 'FAIL: add 2 3 != 5'; exit 1\n");
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << "a failing test is an observation: " << run.dump();
  EXPECT_EQ(run["data"]["passed"], false);
  EXPECT_EQ(run["data"]["exit_code"], 1);
  ExpectFinishRefused();
}

// Incident: the tests passed, then the agent "cleaned up" the code and finished without re-running.
TEST_F(SubmissionTest, FinishAfterAPassingTestAndALaterWriteIsRefused) {
  ASSERT_TRUE(ws_.Call("test.run", json::object())["data"]["passed"].get<bool>());
  json patch = ws_.Call("patch.apply", {{"path", "calc.sh"}, {"old", "-"}, {"new", "+"}});
  ASSERT_TRUE(patch.value("ok", false)) << patch.dump();
  ExpectFinishRefused();
  // Control: a test run after the write makes the finish acceptable again.
  ASSERT_TRUE(ws_.Call("test.run", json::object())["data"]["passed"].get<bool>());
  ExpectFinishAccepted();
}

// Incident: the last test run timed out; "no failure reported" was read as a pass.
TEST_F(SubmissionTest, FinishAfterATimedOutTestIsRefused) {
  SetTestScript("sleep 30\n");
  ASSERT_TRUE(ws_.Configure({"/bin/sh", "test.sh"}, absl::Milliseconds(500)));
  json run = ws_.Call("test.run", json::object());
  if (run.value("ok", false)) {
    EXPECT_EQ(run["data"]["timed_out"], true) << run.dump();
    EXPECT_EQ(run["data"]["passed"], false);
  } else {
    EXPECT_EQ(AgentWorkspace::Code(run), "ETIMEDOUT") << run.dump();
  }
  ExpectFinishRefused();
}

// Incident: a pass, then a failing run; the finish looked at "any pass" instead of the latest run.
TEST_F(SubmissionTest, FinishAfterPassThenFailIsRefused) {
  ASSERT_TRUE(ws_.Call("test.run", json::object())["data"]["passed"].get<bool>());
  SetTestScript("exit 1\n");
  EXPECT_FALSE(ws_.Call("test.run", json::object())["data"]["passed"].get<bool>());
  ExpectFinishRefused();
}

// Control, and incident: a refused patch (no match) was counted as a write and invalidated a good
// test run, so a correct agent could never finish.
TEST_F(SubmissionTest, RefusedPatchIsNotAWriteAndFinishStillSucceeds) {
  ASSERT_TRUE(ws_.Call("test.run", json::object())["data"]["passed"].get<bool>());
  const uint64_t version = ws_.state().world.version;
  json patch = ws_.Call("patch.apply", {{"path", "calc.sh"}, {"old", "no such text"}, {"new", "x"}});
  EXPECT_EQ(AgentWorkspace::Code(patch), "ENOMATCH");
  EXPECT_EQ(ws_.state().world.version, version);
  ExpectFinishAccepted();
}

// Incident: a patch whose old text occurs nowhere "succeeded" silently (the file unchanged) and the
// agent believed its fix was in.
TEST_F(SubmissionTest, PatchMatchingZeroPlacesIsEnomatchAndChangesNothing) {
  json patch = ws_.Call("patch.apply", {{"path", "calc.sh"}, {"old", "$1 * $2"}, {"new", "$1 + $2"}});
  EXPECT_EQ(AgentWorkspace::Code(patch), "ENOMATCH") << patch.dump();
  EXPECT_EQ(patch["error"]["retryable"], false);
  EXPECT_EQ(ReadFile(ws_.Path("calc.sh")), kCalc);
  EXPECT_EQ(ws_.state().world.version, 0u);
}

// Incident: a patch whose old text occurs twice replaced the first occurrence, the wrong one.
TEST_F(SubmissionTest, PatchMatchingTwoPlacesIsEambiguousWithTheCount) {
  const std::string two = "a=$1\nb=$1\n";
  ASSERT_TRUE(WriteFile(ws_.Path("two.sh"), two));
  json patch = ws_.Call("patch.apply", {{"path", "two.sh"}, {"old", "$1"}, {"new", "$2"}});
  EXPECT_EQ(AgentWorkspace::Code(patch), "EAMBIGUOUS") << patch.dump();
  EXPECT_NE(patch["error"]["message"].get<std::string>().find('2'), std::string::npos)
      << "the message must name the count: " << patch.dump();
  EXPECT_EQ(ReadFile(ws_.Path("two.sh")), two);
  EXPECT_EQ(ws_.state().world.version, 0u);
}

// Incident: "aa" in "aaa" was counted once by a non-overlapping search, and the patch applied to an
// ambiguous place. Overlapping occurrences count.
TEST_F(SubmissionTest, OverlappingOccurrencesAreAmbiguous) {
  ASSERT_TRUE(WriteFile(ws_.Path("a.txt"), "aaa\n"));
  json patch = ws_.Call("patch.apply", {{"path", "a.txt"}, {"old", "aa"}, {"new", "b"}});
  EXPECT_EQ(AgentWorkspace::Code(patch), "EAMBIGUOUS") << patch.dump();
  EXPECT_EQ(ReadFile(ws_.Path("a.txt")), "aaa\n");
}

// Incident: the test binary crashed (SIGSEGV); the runner reported no exit code, which a caller
// defaulted to 0 and called a pass. A test command ended by a signal is a failure.
TEST_F(SubmissionTest, TestCommandKilledBySignalIsAFailure) {
  SetTestScript("kill -SEGV $$\n");
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump();
  EXPECT_EQ(run["data"]["passed"], false) << run.dump();
  EXPECT_EQ(run["data"]["term_signal"], 11) << run.dump();
  ExpectFinishRefused();
}

// Incident: a test child crashed as the script's last command; the shell returns 128 + signal (139),
// which is a failure like any non-zero status.
TEST_F(SubmissionTest, ShellReturningAChildsSignalStatusIsAFailure) {
  SetTestScript("sh -c 'kill -SEGV $$'\n");
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump();
  EXPECT_EQ(run["data"]["exit_code"], 139) << run.dump();
  EXPECT_EQ(run["data"]["passed"], false);
  ExpectFinishRefused();
}

// Decision (README "a test command that exits 0 while a child crashed"): the verdict is the exit
// status of the test command, as in CI. The runner sees only its direct child; a script that runs a
// crashing child and then `exit 0` has told us it passed, and the agent may finish. This case pins
// that behaviour so nobody mistakes it for protection; the next case shows the fix belongs in the test
// script (`set -e`).
TEST_F(SubmissionTest, ScriptThatSwallowsAChildsCrashPassesByDesign) {
  SetTestScript("sh -c 'kill -SEGV $$'\necho 'child crashed, ignoring'\nexit 0\n");
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump();
  EXPECT_EQ(run["data"]["exit_code"], 0);
  EXPECT_TRUE(run["data"]["term_signal"].is_null()) << run.dump();
  EXPECT_EQ(run["data"]["passed"], true) << "documented: the test command's own status decides";
  ExpectFinishAccepted();
}

// Incident, fixed at the right layer: with `set -e` the crashing child stops the script with its
// status (139), and finish is refused.
TEST_F(SubmissionTest, SetEScriptPropagatesAChildsCrash) {
  SetTestScript("set -e\nsh -c 'kill -SEGV $$'\nexit 0\n");
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump();
  EXPECT_EQ(run["data"]["exit_code"], 139) << run.dump();
  EXPECT_EQ(run["data"]["passed"], false);
  ExpectFinishRefused();
}

// Incident: the test command itself was missing; "exec failed" came back as exit status 127, and
// a retry loop "fixed" code that was never tested. It must not count as a pass.
TEST_F(SubmissionTest, MissingTestCommandIsNeverAPass) {
  ASSERT_TRUE(ws_.Configure({"/nonexistent/run-tests"}));
  json run = ws_.Call("test.run", json::object());
  if (run.value("ok", false)) {
    EXPECT_EQ(run["data"]["passed"], false) << run.dump();
  } else {
    EXPECT_EQ(AgentWorkspace::Code(run), "ENOENT") << run.dump();
  }
  ExpectFinishRefused();
}

}  // namespace
}  // namespace redteam
