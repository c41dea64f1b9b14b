#include "sandbox/run_result_json.h"

#include <signal.h>

#include <string>

#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox {
namespace {

TEST(RunResultJsonTest, ExitedResultHasEveryField) {
  RunResult result;
  result.exit_code = 3;
  result.wall_time = absl::Milliseconds(12);
  result.user_cpu = absl::Milliseconds(4);
  result.pid = 42;
  result.pgid = 42;
  result.out.data = "hi\n";
  result.out.total_bytes = 10;
  result.out.truncated = true;
  result.limits_in_force = {"RLIMIT_CORE=0:0"};
  result.layers_in_force = {"session"};
  const nlohmann::json json = RunResultToJson(result);
  EXPECT_EQ(json["exit_code"], 3);
  EXPECT_TRUE(json["term_signal"].is_null());
  EXPECT_TRUE(json["signal_name"].is_null());
  EXPECT_EQ(json["timed_out"], false);
  EXPECT_EQ(json["cancelled"], false);
  EXPECT_DOUBLE_EQ(json["wall_ms"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(json["user_cpu_ms"].get<double>(), 4.0);
  EXPECT_EQ(json["pid"], 42);
  EXPECT_EQ(json["stdout"]["data"], "hi\n");
  EXPECT_EQ(json["stdout"]["truncated"], true);
  EXPECT_EQ(json["stdout"]["kept_bytes"], 3);
  EXPECT_EQ(json["stdout"]["total_bytes"], 10);
  EXPECT_EQ(json["stderr"]["data"], "");
  EXPECT_EQ(json["limits_in_force"], nlohmann::json::array({"RLIMIT_CORE=0:0"}));
  EXPECT_EQ(json["layers_in_force"], nlohmann::json::array({"session"}));
}

TEST(RunResultJsonTest, SignalledResultNamesTheSignal) {
  RunResult result;
  result.term_signal = SIGXCPU;
  result.timed_out = true;
  const nlohmann::json json = RunResultToJson(result);
  EXPECT_TRUE(json["exit_code"].is_null());
  EXPECT_EQ(json["term_signal"], SIGXCPU);
  EXPECT_EQ(json["signal_name"], "SIGXCPU");
  EXPECT_EQ(json["timed_out"], true);
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(63), "SIG63");
}

TEST(RunResultJsonTest, BinaryOutputStillSerialises) {
  RunResult result;
  result.out.data = std::string("ok\0\xff\xc3(", 6);
  const nlohmann::json json = RunResultToJson(result);
  EXPECT_EQ(json["stdout"]["utf8_lossy"], true);
  EXPECT_EQ(json["stdout"]["kept_bytes"], 6);
  EXPECT_NO_THROW(json.dump());
  EXPECT_EQ(json["stdout"]["data"], std::string("ok\0\xEF\xBF\xBD\xEF\xBF\xBD(", 10));
}

TEST(RunResultJsonTest, Utf8ValidationFollowsRfc3629) {
  bool lossy = false;
  EXPECT_EQ(ToValidUtf8("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80", &lossy),
            "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_FALSE(lossy);
  for (const char* bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    ToValidUtf8(bad, &lossy);
    EXPECT_TRUE(lossy) << bad;
  }
  // Each byte that starts no sequence becomes one U+FFFD; what follows is read afresh.
  EXPECT_EQ(ToValidUtf8("a\xE2\x82", &lossy), "a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80z", &lossy), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz");
  EXPECT_EQ(ToValidUtf8("\xC3\xA9\xA9", &lossy), "\xC3\xA9\xEF\xBF\xBD");
  EXPECT_TRUE(lossy);
  EXPECT_EQ(ToValidUtf8("\xF4\x8F\xBF\xBF", &lossy), "\xF4\x8F\xBF\xBF");
  EXPECT_FALSE(lossy);
}

TEST(RunResultJsonTest, ErrorCarriesTheTableRow) {
  const nlohmann::json json =
      ErrorToJson(ErrnoError(ENOENT, "exec failed"));
  EXPECT_EQ(json["code"], "ENOENT");
  EXPECT_EQ(json["message"], "exec failed: No such file or directory");
  EXPECT_EQ(json["retryable"], false);
  EXPECT_EQ(json["suggested_action"], "fix_args");
}

}  // namespace
}  // namespace sandbox
