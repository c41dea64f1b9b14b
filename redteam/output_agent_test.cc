// Red-team group `output`, the cases that go through the agent's tools: what a too-large file or a
// too-loud test does to the envelope the model reads. Truncation must be visible (`truncated: true`,
// a ref to the rest), never silent (seed 13.3.4: tool output is not context).
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "agent/builtin_tools.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "redteam/agent_testing.h"
#include "redteam/testing.h"

namespace redteam {
namespace {

using nlohmann::json;

class OutputAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(ws_.Configure({"/bin/sh", "test.sh"}, absl::Seconds(20))); }
  AgentWorkspace ws_;
};

// Incident: a 10 MB test log was pasted whole into the model's context; the model lost the task.
// The envelope keeps a capped head, says truncated, and refers to the full log.
TEST_F(OutputAgentTest, TestRunTruncationIsVisibleInTheEnvelope) {
  ASSERT_TRUE(WriteFile(ws_.Path("test.sh"), "head -c 10485760 /dev/zero | tr '\\0' x; exit 1\n"));
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump().substr(0, 2000);
  EXPECT_EQ(run["data"]["truncated"], true);
  EXPECT_LE(run["data"]["stdout"].get<std::string>().size(), 8u << 10);
  EXPECT_LT(run.dump().size(), 64u << 10) << "the envelope itself must stay small";
  EXPECT_FALSE(run["refs"].empty()) << "a truncated result must say where the rest is";
  EXPECT_EQ(run["data"]["passed"], false);
}

// Incident: the truncation flag covered stdout only; a stderr flood was cut silently.
TEST_F(OutputAgentTest, StderrTruncationIsVisibleToo) {
  ASSERT_TRUE(WriteFile(ws_.Path("test.sh"), "head -c 1048576 /dev/zero | tr '\\0' e >&2\n"));
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump().substr(0, 2000);
  EXPECT_EQ(run["data"]["truncated"], true);
  EXPECT_LE(run["data"]["stderr"].get<std::string>().size(), 8u << 10);
}

// Control: a short output is complete and says so; `truncated` is not stuck at true.
TEST_F(OutputAgentTest, ShortOutputIsNotMarkedTruncated) {
  ASSERT_TRUE(WriteFile(ws_.Path("test.sh"), "echo ok\n"));
  json run = ws_.Call("test.run", json::object());
  ASSERT_TRUE(run.value("ok", false)) << run.dump();
  EXPECT_EQ(run["data"]["truncated"], false);
  EXPECT_EQ(run["data"]["stdout"], "ok\n");
  EXPECT_EQ(run["data"]["passed"], true);
}

// Incident: fs.read of a generated 300 KB file flooded the context. Over 256 KiB it is EFBIG, not
// retryable, with read_range as the suggested action.
TEST_F(OutputAgentTest, FsReadOfHugeFileIsEfbigWithReadRange) {
  ASSERT_TRUE(WriteFile(ws_.Path("big.txt"), std::string(agent::kReadCap + 1, 'b')));
  json read = ws_.Call("fs.read", {{"path", "big.txt"}});
  EXPECT_EQ(AgentWorkspace::Code(read), "EFBIG") << read.dump().substr(0, 500);
  EXPECT_EQ(read["error"]["suggested_action"], "read_range");
  EXPECT_EQ(read["error"]["retryable"], false);
  EXPECT_LT(read.dump().size(), 4096u);
  ASSERT_TRUE(WriteFile(ws_.Path("cap.txt"), std::string(agent::kReadCap, 'c')));
  EXPECT_TRUE(ws_.Call("fs.read", {{"path", "cap.txt"}}).value("ok", false)) << "exactly the cap";
}

// Incident: fs.read_range with an absurd length read a 64 MB file whole into the envelope.
TEST_F(OutputAgentTest, ReadRangeWithAbsurdLengthIsBounded) {
  const int fd = open(ws_.Path("sparse.bin").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64 << 20), 0);
  close(fd);
  json range = ws_.Call("fs.read_range", {{"path", "sparse.bin"}, {"offset", 0},
                                          {"length", 1LL << 40}});
  EXPECT_LT(range.dump().size(), 2u * agent::kReadCap + 4096) << "the read was not bounded";
  if (!range.value("ok", false)) {
    EXPECT_EQ(AgentWorkspace::Code(range), "EINVAL") << range.dump();
  }
}

}  // namespace
}  // namespace redteam
