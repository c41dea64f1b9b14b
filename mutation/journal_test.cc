// The verdict journal: its key follows every byte of the tree and the settings, its lines round
// trip, a torn line (a run killed mid-write) costs only that line, and a verdict that says nothing
// (Pending, RuntimeError) is never reused.
#include "mutation/journal.h"

#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mutation/process.h"
#include "mutation/scratch.h"

namespace mutation {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TmpDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

absl::StatusOr<std::string> KeyOf(const std::map<std::string, std::string>& files,
                                  const std::string& settings = "s") {
  std::vector<std::string> paths;
  for (const auto& [path, text] : files) paths.push_back(path);
  return TreeKey(
      paths, [&](const std::string& p) -> absl::StatusOr<std::string> { return files.at(p); },
      settings);
}

Mutant Judged(const std::string& id, MutantStatus status) {
  Mutant m;
  m.id = id;
  m.status = status;
  m.status_reason = "failed: A.B";
  m.killed_by = {"//lib:a_test"};
  m.covered_by = {"//lib:a_test", "//lib:b_test"};
  m.seconds = 1.5;
  return m;
}

TEST(TreeKeyTest, FollowsEveryByteOfEveryFileAndTheSettings) {
  std::map<std::string, std::string> tree = {{"a.cc", "int a;"}, {"b_test.cc", "TEST(B, C) {}"}};
  absl::StatusOr<std::string> key = KeyOf(tree);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->size(), 16u);
  EXPECT_EQ(*KeyOf(tree), *key) << "the key must be stable across runs";

  std::map<std::string, std::string> test_changed = tree;
  test_changed["b_test.cc"] = "TEST(B, D) {}";
  EXPECT_NE(*KeyOf(test_changed), *key) << "a changed test changes every verdict";
  std::map<std::string, std::string> renamed = {{"a2.cc", "int a;"}, {"b_test.cc", tree["b_test.cc"]}};
  EXPECT_NE(*KeyOf(renamed), *key);
  std::map<std::string, std::string> added = tree;
  added["c.cc"] = "";
  EXPECT_NE(*KeyOf(added), *key) << "an added empty file";
  EXPECT_NE(*KeyOf(tree, "t"), *key) << "other settings";
  // Moving bytes across the path/content border must not collide.
  EXPECT_NE(*KeyOf({{"ab", "c"}}), *KeyOf({{"a", "bc"}}));
}

TEST(TreeKeyTest, AnUnreadableFileIsAnError) {
  absl::StatusOr<std::string> key = TreeKey(
      {"gone.cc"},
      [](const std::string& p) -> absl::StatusOr<std::string> {
        return absl::NotFoundError(p + ": no such file");
      },
      "");
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(key.status().message(), HasSubstr("gone.cc"));
}

TEST(JournalTest, VerdictsAndRunsRoundTrip) {
  std::string path = TmpDir("journal1") + "/j.jsonl";
  {
    absl::StatusOr<std::unique_ptr<Journal>> j = Journal::Open(path, /*keep=*/false);
    ASSERT_TRUE(j.ok()) << j.status();
    (*j)->Record(Judged("f.cc:1:RelationalOperator:0", MutantStatus::kKilled));
    (*j)->Record(Judged("f.cc:2:LogicalOperator:0", MutantStatus::kSurvived));
    (*j)->Record(Judged("catalog:clamp", MutantStatus::kTimeout));
    (*j)->RecordRun(3, 12.5);
    EXPECT_EQ((*j)->error(), "");
  }
  JournalState state = ParseJournal(*ReadFile(path));
  EXPECT_EQ(state.torn_lines, 0);
  EXPECT_EQ(state.runs, 1);
  EXPECT_DOUBLE_EQ(state.seconds, 12.5);
  ASSERT_EQ(state.verdicts.size(), 3u);
  const Mutant& killed = state.verdicts.at("f.cc:1:RelationalOperator:0");
  EXPECT_EQ(killed.status, MutantStatus::kKilled);
  EXPECT_EQ(killed.status_reason, "failed: A.B");
  EXPECT_THAT(killed.killed_by, ElementsAre("//lib:a_test"));
  EXPECT_THAT(killed.covered_by, ElementsAre("//lib:a_test", "//lib:b_test"));
  EXPECT_DOUBLE_EQ(killed.seconds, 1.5);
  EXPECT_EQ(state.verdicts.at("f.cc:2:LogicalOperator:0").status, MutantStatus::kSurvived);
  EXPECT_EQ(state.verdicts.at("catalog:clamp").status, MutantStatus::kTimeout);

  Mutant fresh;
  fresh.id = "f.cc:1:RelationalOperator:0";
  ApplyVerdict(killed, &fresh);
  EXPECT_EQ(fresh.status, MutantStatus::kKilled);
  EXPECT_EQ(fresh.status_reason, killed.status_reason);
  EXPECT_EQ(fresh.killed_by, killed.killed_by);
  EXPECT_EQ(fresh.covered_by, killed.covered_by);
  EXPECT_DOUBLE_EQ(fresh.seconds, 1.5);
}

TEST(JournalTest, KeepAppendsAndAFreshOpenStartsEmpty) {
  std::string path = TmpDir("journal2") + "/j.jsonl";
  {
    auto j = Journal::Open(path, false);
    ASSERT_TRUE(j.ok());
    (*j)->Record(Judged("a", MutantStatus::kKilled));
    (*j)->RecordRun(1, 2);
  }
  {
    auto j = Journal::Open(path, /*keep=*/true);
    ASSERT_TRUE(j.ok());
    (*j)->Record(Judged("b", MutantStatus::kSurvived));
    (*j)->RecordRun(1, 3);
  }
  JournalState kept = ParseJournal(*ReadFile(path));
  EXPECT_EQ(kept.verdicts.size(), 2u);
  EXPECT_EQ(kept.runs, 2);
  EXPECT_DOUBLE_EQ(kept.seconds, 5);
  { ASSERT_TRUE(Journal::Open(path, /*keep=*/false).ok()); }
  EXPECT_EQ(*ReadFile(path), "");
}

TEST(JournalTest, ATornLastLineCostsOnlyThatLine) {
  std::string path = TmpDir("journal3") + "/j.jsonl";
  std::string one = R"({"id":"a","status":"Killed","killed_by":["//x:t"]})";
  ASSERT_TRUE(WriteFileAtomic(path, one + "\n" + R"({"id":"b","stat)").ok());
  JournalState state = ParseJournal(*ReadFile(path));
  EXPECT_EQ(state.torn_lines, 1);
  EXPECT_EQ(state.verdicts.size(), 1u);
  // Reopened to go on, the next verdict starts a line of its own.
  {
    auto j = Journal::Open(path, /*keep=*/true);
    ASSERT_TRUE(j.ok());
    (*j)->Record(Judged("c", MutantStatus::kSurvived));
  }
  state = ParseJournal(*ReadFile(path));
  EXPECT_EQ(state.torn_lines, 1);
  EXPECT_EQ(state.verdicts.count("a"), 1u);
  EXPECT_EQ(state.verdicts.count("c"), 1u);
}

TEST(JournalTest, VerdictsThatSayNothingAreNeitherRecordedNorReused) {
  std::string path = TmpDir("journal4") + "/j.jsonl";
  {
    auto j = Journal::Open(path, false);
    ASSERT_TRUE(j.ok());
    (*j)->Record(Judged("pending", MutantStatus::kPending));
    (*j)->Record(Judged("bazel-crashed", MutantStatus::kRuntimeError));
  }
  EXPECT_EQ(*ReadFile(path), "");
  JournalState state = ParseJournal(
      R"({"id":"p","status":"Pending"})" "\n"
      R"({"id":"r","status":"RuntimeError"})" "\n"
      R"({"id":"u","status":"Exploded"})" "\n"
      R"({"id":"n","status":"Killed","killed_by":"//x:t"})" "\n"
      R"({"id":"s","status":"Killed","seconds":"fast"})" "\n"
      R"({"run_seconds":"long"})" "\n"
      R"(["not an object"])" "\n"
      R"({"id":"ok","status":"NoCoverage"})" "\n");
  EXPECT_EQ(state.verdicts.size(), 1u);
  EXPECT_EQ(state.verdicts.count("ok"), 1u);
  EXPECT_EQ(state.torn_lines, 5) << "unknown status, three wrong-typed fields, a non-object";
  EXPECT_EQ(state.runs, 0);
}

TEST(JournalTest, ALaterLineOfTheSameIdWins) {
  JournalState state = ParseJournal(R"({"id":"a","status":"Survived"})" "\n"
                                    R"({"id":"a","status":"Killed"})" "\n");
  ASSERT_EQ(state.verdicts.count("a"), 1u);
  EXPECT_EQ(state.verdicts.at("a").status, MutantStatus::kKilled);
}

TEST(JournalTest, AnUnwritablePathIsAClearError) {
  absl::StatusOr<std::unique_ptr<Journal>> j = Journal::Open("/nonexistent-dir/j.jsonl", false);
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("/nonexistent-dir/j.jsonl"));
}

}  // namespace
}  // namespace mutation
