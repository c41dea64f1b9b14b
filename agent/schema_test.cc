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

}  // namespace
}  // namespace agent
