#include "mutation/catalog.h"

#include <map>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mutation {
namespace {

using ::testing::HasSubstr;

constexpr char kSource[] =
    "int Clamp(int x) {\n"
    "  if (x > 10) return 10;\n"
    "  return x;\n"
    "}\n";

FileReader Reader(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> absl::StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError(path);
    return it->second;
  };
}

std::string Entry(const std::string& id, const std::string& original,
                  const std::string& replacement = "X") {
  return "{\"id\": \"" + id + "\", \"file\": \"a.cc\", \"original\": \"" + original +
         "\", \"replacement\": \"" + replacement +
         "\", \"boundary\": \"b\", \"why\": \"w\"}";
}

std::string CatalogOf(const std::string& entries) {
  return "{\"thresholds\": {\"high\": 90, \"low\": 70, \"break\": 40}, \"mutants\": [" + entries +
         "]}";
}

TEST(CatalogTest, EntryMatchingExactlyOnceBecomesALocatedMutant) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(Entry("clamp", "x > 10", "x >= 10")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->thresholds.high, 90);
  EXPECT_EQ(c->thresholds.low, 70);
  EXPECT_EQ(c->thresholds.break_at, 40);
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({{"a.cc", kSource}}));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 1u);
  const Mutant& mu = (*m)[0];
  EXPECT_EQ(mu.id, "catalog:clamp");
  EXPECT_TRUE(mu.curated);
  EXPECT_EQ(mu.line, 2);
  EXPECT_EQ(mu.column, 7);
  EXPECT_EQ(mu.end_line, 2);
  EXPECT_EQ(mu.end_column, 13);
  std::string out;
  ASSERT_TRUE(ApplyMutant(mu, kSource, &out));
  EXPECT_THAT(out, HasSubstr("  if (x >= 10) return 10;\n"));
}

TEST(CatalogTest, ZeroMatchesFailLoudlyNamingTheEntry) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(Entry("gone", "x > 11")));
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({{"a.cc", kSource}}));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("gone: the original snippet occurs 0 times"));
}

TEST(CatalogTest, TwoMatchesAreAmbiguous) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(Entry("twice", "10")));
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({{"a.cc", kSource}}));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("occurs 2 times"));
  EXPECT_THAT(m.status().message(), HasSubstr("ambiguous"));
}

TEST(CatalogTest, EveryBadEntryIsListedNotJustTheFirst) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(
      Entry("one", "nope") + "," + Entry("two", "x > 10", "x < 10") + "," + Entry("three", "10")));
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({{"a.cc", kSource}}));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("(2 of 3 entries)"));
  EXPECT_THAT(m.status().message(), HasSubstr("one:"));
  EXPECT_THAT(m.status().message(), HasSubstr("three:"));
}

TEST(CatalogTest, MissingFileIsAnError) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(Entry("nofile", "x")));
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({}));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("nofile: cannot read a.cc"));
}

TEST(CatalogTest, OverlappingOccurrencesCount) {
  EXPECT_EQ(CountOccurrences("aaa", "aa"), 2);
  EXPECT_EQ(CountOccurrences("abc", ""), 0);
  EXPECT_EQ(CountOccurrences("abc", "d"), 0);
}

TEST(CatalogTest, MalformedCatalogsAreRejected) {
  EXPECT_FALSE(ParseCatalog("not json").ok());
  EXPECT_FALSE(ParseCatalog("[]").ok());
  EXPECT_FALSE(ParseCatalog("{}").ok());
  // A missing field.
  EXPECT_FALSE(ParseCatalog(CatalogOf("{\"id\": \"a\", \"file\": \"a.cc\"}")).ok());
  // Empty why.
  EXPECT_FALSE(ParseCatalog(CatalogOf("{\"id\": \"a\", \"file\": \"a.cc\", \"original\": \"x\", "
                                      "\"replacement\": \"y\", \"boundary\": \"b\", \"why\": \"\"}"))
                   .ok());
  // Duplicate ids.
  absl::StatusOr<Catalog> dup = ParseCatalog(CatalogOf(Entry("a", "x") + "," + Entry("a", "y")));
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("duplicate id a"));
  // A replacement that changes nothing.
  EXPECT_FALSE(ParseCatalog(CatalogOf(Entry("same", "x", "x"))).ok());
  // Thresholds out of order.
  EXPECT_FALSE(
      ParseCatalog("{\"thresholds\": {\"high\": 50, \"low\": 60}, \"mutants\": []}").ok());
}

TEST(CatalogTest, EmptyReplacementDeletesTheSnippet) {
  absl::StatusOr<Catalog> c = ParseCatalog(CatalogOf(Entry("del", "  return x;\\n", "")));
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<std::vector<Mutant>> m = ResolveCatalog(*c, Reader({{"a.cc", kSource}}));
  ASSERT_TRUE(m.ok()) << m.status();
  std::string out;
  ASSERT_TRUE(ApplyMutant((*m)[0], kSource, &out));
  EXPECT_EQ(out, "int Clamp(int x) {\n  if (x > 10) return 10;\n}\n");
}

}  // namespace
}  // namespace mutation
