#include "mutation/report.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace mutation {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSource[] = "int f(int x) {\n  return x < 3;\n}\n";

std::vector<Mutant> Sample() {
  Mutant killed;
  killed.id = "a/f.cc:2:RelationalOperator:0";
  killed.file = "a/f.cc";
  killed.mutator = "RelationalOperator";
  killed.offset = std::string(kSource).find("<");
  killed.original = "<";
  killed.replacement = "<=";
  LocateMutant(kSource, &killed);
  killed.status = MutantStatus::kKilled;
  killed.covered_by = {"//a:f_test"};
  killed.killed_by = {"//a:f_test"};
  Mutant survived = killed;
  survived.id = "catalog:lt";
  survived.curated = true;
  survived.mutator = "Curated";
  survived.boundary = "b";
  survived.why = "w";
  survived.replacement = ">";
  survived.status = MutantStatus::kSurvived;
  survived.killed_by.clear();
  Mutant unviable = killed;
  unviable.id = "a/f.cc:2:ConstantPlusOne:0";
  unviable.mutator = "ConstantPlusOne";
  unviable.offset = std::string(kSource).find("3");
  unviable.original = "3";
  unviable.replacement = "4";
  LocateMutant(kSource, &unviable);
  unviable.status = MutantStatus::kCompileError;
  unviable.killed_by.clear();
  return {killed, survived, unviable};
}

// Validates the parts of the mutation-testing-elements schema (version 1) the runner emits.
void ExpectSchema(const nlohmann::json& j) {
  static const std::set<std::string> kStatuses = {"Killed",       "Survived",     "NoCoverage",
                                                  "CompileError", "RuntimeError", "Timeout",
                                                  "Ignored",      "Pending"};
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("schemaVersion"), "1");
  ASSERT_TRUE(j.at("thresholds").at("high").is_number_integer());
  ASSERT_TRUE(j.at("thresholds").at("low").is_number_integer());
  EXPECT_LE(j["thresholds"]["low"].get<int>(), j["thresholds"]["high"].get<int>());
  ASSERT_TRUE(j.at("files").is_object());
  for (const auto& [name, file] : j["files"].items()) {
    EXPECT_EQ(file.at("language"), "cpp") << name;
    EXPECT_TRUE(file.at("source").is_string()) << name;
    ASSERT_TRUE(file.at("mutants").is_array()) << name;
    std::set<std::string> ids;
    for (const nlohmann::json& m : file["mutants"]) {
      EXPECT_TRUE(m.at("id").is_string());
      EXPECT_TRUE(ids.insert(m["id"].get<std::string>()).second) << "duplicate id " << m["id"];
      EXPECT_TRUE(m.at("mutatorName").is_string());
      EXPECT_TRUE(m.at("replacement").is_string());
      EXPECT_EQ(kStatuses.count(m.at("status").get<std::string>()), 1u) << m["status"];
      for (const char* end : {"start", "end"}) {
        const nlohmann::json& pos = m.at("location").at(end);
        EXPECT_GE(pos.at("line").get<int>(), 1);
        EXPECT_GE(pos.at("column").get<int>(), 1);
      }
      for (const char* list : {"killedBy", "coveredBy"}) {
        ASSERT_TRUE(m.at(list).is_array());
        for (const nlohmann::json& t : m[list]) EXPECT_TRUE(t.is_string());
      }
    }
  }
}

TEST(ReportTest, JsonFollowsTheMutationTestingElementsSchema) {
  std::vector<Mutant> ms = Sample();
  nlohmann::json j = JsonReport(ms, {{"a/f.cc", kSource}}, Thresholds{85, 65, 50});
  ExpectSchema(j);
  EXPECT_EQ(j["thresholds"]["high"], 85);
  EXPECT_EQ(j["thresholds"]["low"], 65);
  const nlohmann::json& file = j["files"]["a/f.cc"];
  EXPECT_EQ(file["source"], kSource);
  ASSERT_EQ(file["mutants"].size(), 3u);
  const nlohmann::json& k = file["mutants"][0];
  EXPECT_EQ(k["status"], "Killed");
  EXPECT_EQ(k["killedBy"], nlohmann::json::array({"//a:f_test"}));
  EXPECT_EQ(k["location"]["start"]["line"], 2);
  EXPECT_EQ(k["location"]["start"]["column"], 12);
  EXPECT_EQ(k["location"]["end"]["column"], 13);
  EXPECT_EQ(file["mutants"][1]["status"], "Survived");
  EXPECT_EQ(file["mutants"][1]["description"], "b: w");
  EXPECT_EQ(file["mutants"][2]["status"], "CompileError");
}

TEST(ReportTest, HtmlIsSelfContainedAndShowsLinesAndStatuses) {
  std::string html = HtmlReport(Sample(), {{"a/f.cc", kSource}}, Thresholds{});
  EXPECT_THAT(html, HasSubstr("a/f.cc"));
  EXPECT_THAT(html, HasSubstr("Killed"));
  EXPECT_THAT(html, HasSubstr("Survived"));
  EXPECT_THAT(html, HasSubstr("CompileError"));
  EXPECT_THAT(html, HasSubstr("return x &lt; 3;"));  // escaped source
  // Nothing is loaded from anywhere: no scripts, stylesheets or images by URL.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
}

TEST(ReportTest, SummaryListsEverySurvivorWithLineDiffAndTests) {
  std::string s = TerminalSummary(Sample(), {{"a/f.cc", kSource}}, Thresholds{});
  EXPECT_THAT(s, HasSubstr("CURATED Survived: a/f.cc:2"));
  EXPECT_THAT(s, HasSubstr("-  return x < 3;"));
  EXPECT_THAT(s, HasSubstr("+  return x > 3;"));
  EXPECT_THAT(s, HasSubstr("tests that ran: //a:f_test"));
  EXPECT_THAT(s, Not(HasSubstr("RelationalOperator:0)")));  // the killed one is not listed
  EXPECT_THAT(s, HasSubstr("score 100.0% (break below 50%)"));
  // A curated-only run has no generated score, rather than a perfect one.
  std::vector<Mutant> curated_only = {Sample()[1]};
  EXPECT_THAT(TerminalSummary(curated_only, {{"a/f.cc", kSource}}, Thresholds{}),
              HasSubstr("score n/a"));
}

TEST(ReportTest, ScoreCountsTimeoutsAsDetectedAndLeavesUnviableOut) {
  std::vector<Mutant> ms(5);
  ms[0].status = MutantStatus::kKilled;
  ms[1].status = MutantStatus::kTimeout;
  ms[2].status = MutantStatus::kSurvived;
  ms[3].status = MutantStatus::kNoCoverage;
  ms[4].status = MutantStatus::kCompileError;
  Score s = ScoreOf(ms, false);
  EXPECT_EQ(s.detected(), 2);
  EXPECT_EQ(s.valid(), 4);
  EXPECT_DOUBLE_EQ(s.percent(), 50.0);
  EXPECT_EQ(ScoreOf(ms, true).valid(), 0);
  EXPECT_DOUBLE_EQ(ScoreOf(ms, true).percent(), 100.0);
}

}  // namespace
}  // namespace mutation
