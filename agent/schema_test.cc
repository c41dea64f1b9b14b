#include "agent/schema.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const json kReadSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 4, "pattern": "^[a-z./]+$"},
    "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 2},
    "mode": {"enum": ["fast", "slow"]}
  },
  "required": ["path"],
  "additionalProperties": false
})");

TEST(SchemaTest, ValidInstanceHasNoViolations) {
  EXPECT_THAT(Validate(kReadSchema, json::parse(R"({"path": "a.c", "lines": [1, 2]})")), IsEmpty());
}

TEST(SchemaTest, MissingRequiredNamesThePath) {
  auto v = Validate(kReadSchema, json::object());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].path, "$.path");
  EXPECT_THAT(v[0].message, HasSubstr("required"));
}

TEST(SchemaTest, WrongTypeNamesThePathAndBothTypes) {
  auto v = Validate(kReadSchema, json::parse(R"({"path": 7})"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].path, "$.path");
  EXPECT_THAT(v[0].message, HasSubstr("\"string\""));
  EXPECT_THAT(v[0].message, HasSubstr("integer"));
}

TEST(SchemaTest, NestedArrayItemPath) {
  auto v = Validate(kReadSchema, json::parse(R"({"path": "a", "lines": [1, 0]})"));
  EXPECT_THAT(v, ElementsAre(Field(&SchemaViolation::path, "$.lines[1]")));
}

TEST(SchemaTest, AdditionalPropertyIsRejectedWithOddKeyQuoted) {
  auto v = Validate(kReadSchema, json::parse(R"({"path": "a", "odd key": 1})"));
  EXPECT_THAT(v, ElementsAre(Field(&SchemaViolation::path, "$[\"odd key\"]")));
}

TEST(SchemaTest, LengthCountsCodePointsNotBytes) {
  json schema = {{"maxLength", 2}};
  EXPECT_THAT(Validate(schema, "\xC3\xA9\xC3\xA9"), IsEmpty());  // Two code points, four bytes.
  EXPECT_THAT(Validate(schema, "\xC3\xA9\xC3\xA9\xC3\xA9"), testing::SizeIs(1));
}

TEST(SchemaTest, PatternIsAnUnanchoredSearch) {
  json schema = {{"pattern", "b+"}};
  EXPECT_THAT(Validate(schema, "abbbc"), IsEmpty());
  EXPECT_THAT(Validate(schema, "ac"), testing::SizeIs(1));
}

TEST(SchemaTest, IntegerAcceptsIntegralFloats) {
  json schema = {{"type", "integer"}};
  EXPECT_THAT(Validate(schema, json::parse("1.0")), IsEmpty());
  EXPECT_THAT(Validate(schema, json::parse("1.5")), testing::SizeIs(1));
}

TEST(SchemaTest, ExclusiveBoundsAreStrict) {
  json schema = {{"exclusiveMinimum", 1}, {"exclusiveMaximum", 3}};
  EXPECT_THAT(Validate(schema, 2), IsEmpty());
  EXPECT_THAT(Validate(schema, 1), testing::SizeIs(1));
  EXPECT_THAT(Validate(schema, 3), testing::SizeIs(1));
}

TEST(SchemaTest, LargeUnsignedComparesExactly) {
  json schema = {{"maximum", json(uint64_t{18446744073709551614u})}};
  EXPECT_THAT(Validate(schema, json(uint64_t{18446744073709551615u})), testing::SizeIs(1));
  EXPECT_THAT(Validate(schema, json(int64_t{-1})), IsEmpty());
}

TEST(SchemaTest, ConstAndEnumCompareNumbersByValue) {
  EXPECT_THAT(Validate(json{{"const", 1}}, json::parse("1.0")), IsEmpty());
  EXPECT_THAT(Validate(json{{"enum", {false}}}, 0), testing::SizeIs(1));
}

TEST(SchemaTest, BooleanSchemas) {
  EXPECT_THAT(Validate(json(true), json::parse(R"({"x": 1})")), IsEmpty());
  EXPECT_THAT(Validate(json(false), 1), testing::SizeIs(1));
}

TEST(SchemaTest, ViolationsAreCapped) {
  json schema = {{"items", {{"type", "string"}}}};
  json many = json::array();
  for (int i = 0; i < 100; ++i) many.push_back(i);
  EXPECT_EQ(Validate(schema, many, 5).size(), 5u);
}

TEST(SchemaTest, FormatJoinsPathAndMessage) {
  EXPECT_EQ(FormatViolations({{"$.a", "x"}, {"$.b", "y"}}), "$.a: x; $.b: y");
}

TEST(CheckSchemaTest, AcceptsSupportedKeywordsAndAnnotations) {
  EXPECT_TRUE(CheckSchema(kReadSchema).ok());
  EXPECT_TRUE(CheckSchema(json::parse(R"({"$schema": "x", "title": "t", "description": "d"})")).ok());
}

TEST(CheckSchemaTest, RejectsUnsupportedKeywordNamingItsLocation) {
  auto s = CheckSchema(json::parse(R"({"properties": {"a": {"$ref": "#"}}})"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("#/properties/a/$ref"));
  EXPECT_FALSE(CheckSchema(json::parse(R"({"format": "email"})")).ok());
}

TEST(CheckSchemaTest, RejectsMalformedValues) {
  EXPECT_FALSE(CheckSchema(json::parse(R"({"type": "str"})")).ok());
  EXPECT_FALSE(CheckSchema(json::parse(R"({"minLength": -1})")).ok());
  EXPECT_FALSE(CheckSchema(json::parse(R"({"pattern": "("})")).ok());
  EXPECT_FALSE(CheckSchema(json::parse(R"({"required": [1]})")).ok());
  EXPECT_FALSE(CheckSchema(json(3)).ok());
}

TEST(SchemaTest, MalformedUncheckedSchemaIsAViolationNotAnException) {
  EXPECT_THAT(Validate(json::parse(R"({"minLength": "two"})"), "x"), testing::SizeIs(1));
  EXPECT_THAT(Validate(json::parse(R"({"pattern": 3})"), "x"), testing::SizeIs(1));
}

TEST(SchemaTest, UnsupportedKeywordAtValidationIsAViolationNotIgnored) {
  EXPECT_THAT(Validate(json::parse(R"({"format": "email"})"), "x"), testing::SizeIs(1));
}

// Integers of either sign against bounds of either sign, and integers against fractional bounds:
// CompareNumbers' sign split and its integer-only fast path.
TEST(SchemaTest, BoundsCompareAcrossSignsAndKinds) {
  EXPECT_THAT(Validate(json{{"maximum", 0}}, 0), IsEmpty());
  EXPECT_THAT(Validate(json{{"minimum", 0}}, -1), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"exclusiveMinimum", -1}}, 1), IsEmpty());
  EXPECT_THAT(Validate(json{{"exclusiveMaximum", -1}}, 1), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"minimum", -5}}, -3), IsEmpty());
  EXPECT_THAT(Validate(json{{"minimum", -5}}, -7), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"maximum", -5}}, -5), IsEmpty());
  EXPECT_THAT(Validate(json{{"exclusiveMaximum", -5}}, -5), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"minimum", 1.5}}, 1), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"maximum", 1.5}}, 2), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"maximum", 1.5}}, 1), IsEmpty());
  // Above INT64_MAX, where a signed comparison would wrap.
  json big = json(uint64_t{9223372036854775808u});
  EXPECT_THAT(Validate(json{{"maximum", 1}}, big), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"minimum", big}}, 1), testing::SizeIs(1));
}

TEST(SchemaTest, BoundMessagesNameTheRelation) {
  auto message = [](const char* keyword, int bound, int got) {
    auto v = Validate(json{{keyword, bound}}, got);
    return v.size() == 1 ? v[0].message : "no single violation";
  };
  EXPECT_EQ(message("minimum", 2, 1), "must be >= 2 (got 1)");
  EXPECT_EQ(message("maximum", 2, 3), "must be <= 2 (got 3)");
  EXPECT_EQ(message("exclusiveMinimum", 2, 2), "must be > 2 (got 2)");
  EXPECT_EQ(message("exclusiveMaximum", 2, 2), "must be < 2 (got 2)");
}

TEST(SchemaTest, PathsUseDotsOnlyForPlainIdentifiers) {
  auto path_of = [](const std::string& key) {
    json schema = {{"properties", {{key, {{"type", "string"}}}}}};
    auto v = Validate(schema, json{{key, 1}});
    return v.size() == 1 ? v[0].path : "no single violation";
  };
  EXPECT_EQ(path_of("a"), "$.a");
  EXPECT_EQ(path_of("z"), "$.z");
  EXPECT_EQ(path_of("A"), "$.A");
  EXPECT_EQ(path_of("Z"), "$.Z");
  EXPECT_EQ(path_of("_"), "$._");
  EXPECT_EQ(path_of("a0"), "$.a0");
  EXPECT_EQ(path_of("a9"), "$.a9");
  EXPECT_EQ(path_of("0a"), "$[\"0a\"]");
  EXPECT_EQ(path_of("a-b"), "$[\"a-b\"]");
  EXPECT_EQ(path_of("a:"), "$[\"a:\"]");  // ':' follows '9'.
  EXPECT_EQ(path_of("a/"), "$[\"a/\"]");  // '/' precedes '0'.
  EXPECT_EQ(path_of("a`"), "$[\"a`\"]");  // '`' precedes 'a'.
  EXPECT_EQ(path_of("a{"), "$[\"a{\"]");  // '{' follows 'z'.
  EXPECT_EQ(path_of("a@"), "$[\"a@\"]");  // '@' precedes 'A'.
  EXPECT_EQ(path_of("a["), "$[\"a[\"]");  // '[' follows 'Z'.
  EXPECT_EQ(path_of(""), "$[\"\"]");
}

TEST(SchemaTest, LongValuesAreShortenedInMessagesPastSixtyCharacters) {
  auto message = [](const std::string& bound) {
    auto v = Validate(json{{"const", bound}}, 1);
    return v.size() == 1 ? v[0].message : "no single violation";
  };
  const std::string fits(58, 'x');  // 60 characters with its quotes.
  EXPECT_THAT(message(fits), HasSubstr("\"" + fits + "\""));
  const std::string cut = std::string(56, 'x') + "yzw";  // 61 with quotes: 57 are kept, then "...".
  EXPECT_THAT(message(cut), HasSubstr("\"" + std::string(56, 'x') + "..."));
  EXPECT_THAT(message(cut), Not(HasSubstr("y")));
}

TEST(SchemaTest, ItemsCheckTheFirstElementToo) {
  auto paths = [](const json& schema, const json& instance) {
    std::vector<std::string> out;
    for (const auto& v : Validate(schema, instance)) out.push_back(v.path);
    return out;
  };
  EXPECT_THAT(paths(json{{"items", {{"type", "string"}}}}, json{1, "a", 2}),
              ElementsAre("$[0]", "$[2]"));
  // A tuple checks each element against its own schema, and no further.
  EXPECT_THAT(paths(json{{"items", json::array({{{"type", "string"}}, {{"type", "integer"}}})}},
                    json{1, "a", "b"}),
              ElementsAre("$[0]", "$[1]"));
}

TEST(SchemaTest, ZeroLengthLimitsAreEnforced) {
  EXPECT_THAT(Validate(json{{"maxLength", 0}}, ""), IsEmpty());
  EXPECT_THAT(Validate(json{{"maxLength", 0}}, "a"), testing::SizeIs(1));
  EXPECT_THAT(Validate(json{{"maxItems", 0}}, json::array({1})), testing::SizeIs(1));
}

TEST(SchemaTest, ACapOfZeroStillReportsOneViolation) {
  json many = json::array();
  for (int i = 0; i < 10; ++i) many.push_back(i);
  EXPECT_EQ(Validate(json{{"items", {{"type", "string"}}}}, many, 0).size(), 1u);
  EXPECT_EQ(Validate(json{{"items", {{"type", "string"}}}}, many, 1).size(), 1u);
}

TEST(SchemaTest, UnusableSchemaAtValidationIsAViolationNamingTheProblem) {
  auto v = Validate(json(3), 1);
  ASSERT_THAT(v, testing::SizeIs(1));
  EXPECT_THAT(v[0].message, HasSubstr("neither an object nor a boolean"));
  v = Validate(json{{"pattern", "("}}, "x");
  ASSERT_THAT(v, testing::SizeIs(1));
  EXPECT_THAT(v[0].message, HasSubstr("does not compile"));
}

TEST(CheckSchemaTest, AcceptsEdgeValuesOfWellFormedKeywords) {
  EXPECT_TRUE(CheckSchema(json{{"minLength", 0}}).ok());
  EXPECT_TRUE(CheckSchema(json{{"const", 1}}).ok());
  EXPECT_TRUE(CheckSchema(json{{"items", json::array({json::object()})}}).ok());
  EXPECT_TRUE(CheckSchema(json{{"items", json::array({json::object(), json::object()})}}).ok());
}

TEST(CheckSchemaTest, ChecksEveryTupleItemIncludingTheFirst) {
  EXPECT_FALSE(CheckSchema(json{{"items", json::array({{{"minLength", -1}}, json::object()})}}).ok());
  EXPECT_FALSE(CheckSchema(json{{"items", json::array({json::object(), {{"minLength", -1}}})}}).ok());
}

TEST(KeywordTest, KnowsEnforcedKeywordsAndAnnotations) {
  EXPECT_TRUE(IsSupportedKeyword("minimum"));
  EXPECT_TRUE(IsSupportedKeyword("additionalProperties"));
  EXPECT_TRUE(IsSupportedKeyword("title"));
  EXPECT_FALSE(IsSupportedKeyword("format"));
  EXPECT_FALSE(IsSupportedKeyword("$ref"));
  EXPECT_FALSE(IsSupportedKeyword(""));
}

}  // namespace
}  // namespace agent
