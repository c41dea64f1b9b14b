#include "agent/registry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace agent {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

// A tool that records which of its stages ran, so the tests can see the registry's order.
struct Recorder {
  std::vector<std::string> calls;
  absl::Status precondition = absl::OkStatus();
  absl::StatusOr<ToolOutput> result = ToolOutput{};
  bool throw_json = false;

  ToolSpec Spec(const std::string& name, const std::string& scope) {
    ToolSpec spec;
    spec.name = name;
    spec.description = "records calls";
    spec.input_schema = json::parse(R"({"type": "object",
        "properties": {"path": {"type": "string", "minLength": 1}},
        "required": ["path"], "additionalProperties": false})");
    spec.auth_scope = scope;
    spec.cost = {{"units", 1}};
    spec.precondition = [this](const ToolContext&, const json&) {
      calls.push_back("precondition");
      return precondition;
    };
    spec.handler = [this](ToolContext&, const json& args) -> absl::StatusOr<ToolOutput> {
      calls.push_back("handler");
      if (throw_json) return ToolOutput{args.at("missing"), {}, {}};  // Throws out_of_range.
      return result;
    };
    return spec;
  }
};

class RegistryTest : public ::testing::Test {
 protected:
  RegistryTest() : registry_(ToolEnv{}, {"workspace:read"}) {
    registry_.set_clock([] { return absl::FromUnixMillis(1792374226852); });
  }
  Registry registry_;
  State state_;
};

TEST_F(RegistryTest, ScopeIsCheckedBeforeSchema) {
  Recorder rec;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.write", "workspace:write")).ok());
  // The arguments are invalid too; the scope refusal must come first and nothing else may run.
  json env = registry_.Call(state_, "t.write", json::parse(R"({"bogus": 1})"));
  EXPECT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["error"]["code"], "EPERM");
  EXPECT_EQ(env["error"]["retryable"], false);
  EXPECT_EQ(env["error"]["suggested_action"], "stop");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("workspace:write"));
  EXPECT_THAT(rec.calls, IsEmpty());
}

TEST_F(RegistryTest, SchemaIsCheckedBeforePrecondition) {
  Recorder rec;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.read", json::parse(R"({"path": 3})"));
  EXPECT_EQ(env["error"]["code"], "EINVAL");
  EXPECT_EQ(env["error"]["suggested_action"], "fix_args");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("$.path"));
  EXPECT_THAT(rec.calls, IsEmpty());
}

TEST_F(RegistryTest, PreconditionIsCheckedBeforeHandler) {
  Recorder rec;
  rec.precondition = sandbox::MakeError(sandbox::ErrorCode::kEPRECONDITION, "not yet");
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.read", {{"path", "a"}});
  EXPECT_EQ(env["error"]["code"], "EPRECONDITION");
  EXPECT_EQ(env["error"]["message"], "not yet");
  EXPECT_THAT(rec.calls, ElementsAre("precondition"));
}

TEST_F(RegistryTest, SuccessRunsAllStagesInOrderAndBuildsTheEnvelope) {
  Recorder rec;
  rec.result = ToolOutput{{{"x", 1}}, {{"a.txt", "abc"}}, {{"wall_ms", 2}}};
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.read", {{"path", "a"}});
  EXPECT_THAT(rec.calls, ElementsAre("precondition", "handler"));
  EXPECT_EQ(env["ok"], true);
  EXPECT_EQ(env["data"], json({{"x", 1}}));
  EXPECT_TRUE(env["error"].is_null());
  EXPECT_EQ(env["refs"], json::parse(R"([{"path": "a.txt", "sha256": "abc"}])"));
  EXPECT_EQ(env["cost"], json({{"units", 1}, {"wall_ms", 2}}));
  EXPECT_EQ(env["observed_at"], "2026-10-19T01:43:46.852Z");
}

TEST_F(RegistryTest, ObservedAtIsRfc3339UtcWithMilliseconds) {
  Registry r(ToolEnv{}, {});
  json env = r.Call(state_, "nope", json::object());
  EXPECT_THAT(env["observed_at"].get<std::string>(),
              MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"));
}

TEST_F(RegistryTest, HandlerErrorTakesRetryabilityFromTheTable) {
  Recorder rec;
  rec.result = sandbox::MakeError(sandbox::ErrorCode::kETRANSIENT, "try later");
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.read", {{"path", "a"}});
  EXPECT_EQ(env["error"]["code"], "ETRANSIENT");
  EXPECT_EQ(env["error"]["retryable"], true);
  EXPECT_EQ(env["error"]["suggested_action"], "retry");
  EXPECT_TRUE(env["data"].is_null());
  EXPECT_EQ(env["refs"], json::array());
}

TEST_F(RegistryTest, ExceptionsBecomeEinternal) {
  Recorder rec;
  rec.throw_json = true;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.read", {{"path", "a"}});
  EXPECT_EQ(env["error"]["code"], "EINTERNAL");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("exception"));
}

TEST_F(RegistryTest, UnknownToolIsEinvalNamingTheKnownOnes) {
  Recorder rec;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json env = registry_.Call(state_, "t.nope", json::object());
  EXPECT_EQ(env["error"]["code"], "EINVAL");
  EXPECT_THAT(env["error"]["message"].get<std::string>(), HasSubstr("t.read"));
}

TEST_F(RegistryTest, RegisterRefusesBadSpecs) {
  Recorder rec;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  EXPECT_EQ(sandbox::CodeOf(registry_.Register(rec.Spec("t.read", "workspace:read"))),
            sandbox::ErrorCode::kEINVAL);
  EXPECT_FALSE(registry_.Register(rec.Spec("t.other", "")).ok());
  ToolSpec bad_schema = rec.Spec("t.schema", "workspace:read");
  bad_schema.input_schema = json::parse(R"({"properties": {"p": {"format": "uri"}}})");
  absl::Status s = registry_.Register(bad_schema);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("format"));
  ToolSpec no_handler = rec.Spec("t.nohandler", "workspace:read");
  no_handler.handler = nullptr;
  EXPECT_FALSE(registry_.Register(no_handler).ok());
}

TEST_F(RegistryTest, DescribeListsTheContractFields) {
  Recorder rec;
  ASSERT_TRUE(registry_.Register(rec.Spec("t.read", "workspace:read")).ok());
  json d = registry_.Describe();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["name"], "t.read");
  EXPECT_EQ(d[0]["effect"], "read");
  EXPECT_EQ(d[0]["idempotency"], "idempotent");
  EXPECT_EQ(d[0]["auth_scope"], "workspace:read");
}

}  // namespace
}  // namespace agent
