#include "mutation/generate.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mutation {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<Mutant> Gen(const std::string& text) {
  absl::StatusOr<std::vector<Mutant>> m = GenerateMutants("p/f.cc", text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : std::vector<Mutant>{};
}

// "mutator original->replacement" for each mutant, for compact assertions.
std::vector<std::string> Describe(const std::vector<Mutant>& ms) {
  std::vector<std::string> out;
  for (const Mutant& m : ms) out.push_back(m.mutator + " " + m.original + "->" + m.replacement);
  return out;
}

TEST(GenerateTest, RelationalOperatorsNeedSpacesSoTemplatesAndArrowsAreLeftAlone) {
  EXPECT_THAT(Describe(Gen("bool b = a < c;\n")),
              ElementsAre("RelationalOperator <-><="));
  EXPECT_THAT(Describe(Gen("x = a <= c || a >= d;\n")),
              ElementsAre("RelationalOperator <=-><", "LogicalOperator ||->&&",
                          "RelationalOperator >=->>"));
  EXPECT_THAT(Describe(Gen("y = a == c && a != d;\n")),
              ElementsAre("RelationalOperator ==->!=", "LogicalOperator &&->||",
                          "RelationalOperator !=->=="));
  // `a && b && c` -> `a && b || c` does not compile under -Wparentheses -Werror: only operators
  // alone at their parenthesis level (and on their line) are swapped.
  EXPECT_THAT(Describe(Gen("if (a && b && c) {\n")), ElementsAre("NegateCondition (a && b && c)->(!(a && b && c))"));
  EXPECT_THAT(Describe(Gen("x = (a && b) || (c && d);\n")),
              ElementsAre("LogicalOperator &&->||", "LogicalOperator ||->&&",
                          "LogicalOperator &&->||"));
  EXPECT_THAT(Describe(Gen("x = a &&\n    b;\n")), IsEmpty());
  EXPECT_THAT(Gen("std::vector<int> v; p->q; s << t; a >> b; auto&& r = f();\n"), IsEmpty());
  EXPECT_THAT(Gen("bool operator==(const A&) const;\n"), IsEmpty());
}

TEST(GenerateTest, NegatesWholeSingleLineConditions) {
  // `f();` shares its line with the `if`: not a whole-line call statement, so it stays.
  EXPECT_THAT(Describe(Gen("if (ok) f();\n")), ElementsAre("NegateCondition (ok)->(!(ok))"));
  EXPECT_THAT(Describe(Gen("while (g(x)) {\n")), ElementsAre("NegateCondition (g(x))->(!(g(x)))"));
  // Conditions that continue on the next line and init-statements are skipped.
  EXPECT_THAT(Gen("if (a &&\n"), testing::SizeIs(0));
  EXPECT_THAT(Describe(Gen("if (auto it = m.find(k); it) {\n")), IsEmpty());
  EXPECT_THAT(Gen("notif (x) {\n"), IsEmpty());
}

TEST(GenerateTest, ReturnValues) {
  EXPECT_THAT(Describe(Gen("return true;\nreturn false;\nreturn 0;\nreturn 1;\n")),
              ElementsAre("ReturnValue true->false", "ReturnValue false->true",
                          "ReturnValue 0->1", "ReturnValue 1->0"));
  EXPECT_THAT(Describe(Gen("return absl::OkStatus();\n")),
              ElementsAre("ReturnValue absl::OkStatus()->absl::InternalError(\"mutant\")"));
  EXPECT_THAT(Gen("return x;\n"), IsEmpty());
}

TEST(GenerateTest, DeletesWholeCallStatementsOnly) {
  EXPECT_THAT(Describe(Gen("{\n  a.b->c(d, e(f));\n}\n")), ElementsAre("DeleteCall a.b->c(d, e(f));->"));
  EXPECT_THAT(Describe(Gen("x;\nSB_RETURN_IF_ERROR(Step());\n")),
              ElementsAre("DeleteCall SB_RETURN_IF_ERROR(Step());->"));
  // Declarations, returns, assignments, statement tails and declaring macros stay.
  EXPECT_THAT(Gen("Foo bar(x);\nreturn f(x);\ny = f(x);\nif (q) (void)f();\n"),
              testing::Not(testing::Contains(testing::Field(&Mutant::mutator,
                                                            std::string(kDeleteCall)))));
  EXPECT_THAT(Gen("auto v = Make(\n    f(x));\n"), IsEmpty());
  EXPECT_THAT(Gen("x;\nSB_ASSIGN_OR_RETURN(auto v, Get());\n"), IsEmpty());
}

TEST(GenerateTest, ConstantsPlusAndMinusOneKeepingSuffixes) {
  EXPECT_THAT(Describe(Gen("int a = 4096u;\n")),
              ElementsAre("ConstantPlusOne 4096u->4097u", "ConstantMinusOne 4096u->4095u"));
  EXPECT_THAT(Describe(Gen("int b = 0;\n")), ElementsAre("ConstantPlusOne 0->1"));
  EXPECT_THAT(Describe(Gen("int c = 1'000;\n")),
              ElementsAre("ConstantPlusOne 1'000->1001", "ConstantMinusOne 1'000->999"));
  // Template arguments are types' shapes, not behaviour; comparisons and shifts are still code.
  EXPECT_THAT(Gen("std::array<uint8_t, 16> b{};\nstd::min<uint64_t>(x, 2);\n"),
              testing::ElementsAre(testing::Field(&Mutant::original, "2"),
                                   testing::Field(&Mutant::original, "2")));
  EXPECT_THAT(Describe(Gen("y = a < 3;\n")),
              ElementsAre("RelationalOperator <-><=", "ConstantPlusOne 3->4",
                          "ConstantMinusOne 3->2"));
  EXPECT_THAT(Describe(Gen("y = 64 << 10;\n")),
              ElementsAre("ConstantPlusOne 64->65", "ConstantMinusOne 64->63",
                          "ConstantPlusOne 10->11", "ConstantMinusOne 10->9"));
  // The -1 error sentinel is left alone; a subtraction of 1 is not.
  EXPECT_THAT(Gen("if (close(fd) == -1) return;\nif (f(-1)) x;\n"),
              testing::Not(testing::Contains(testing::Field(&Mutant::original, "1"))));
  EXPECT_THAT(Describe(Gen("y = n -1;\n")),
              ElementsAre("ConstantPlusOne 1->2", "ConstantMinusOne 1->0"));
  // Floats, hex, octal, identifiers with digits are left alone.
  EXPECT_THAT(Gen("d = 1.5 + 0x10 + 017 + x2 + 1e3;\n"),
              testing::Not(testing::Contains(testing::Field(&Mutant::mutator,
                                                            std::string(kConstantPlus)))));
}

TEST(GenerateTest, CommentsStringsCharsRawStringsAndIncludesAreNotCode) {
  std::string text =
      "#include <vector>\n"
      "#define LIMIT(a) (a > 1)\n"
      "// if (x > 1) return true;\n"
      "/* a < b\n   && c */\n"
      "const char* s = \"x > 1 && y\";\n"
      "char q = '>';\n"
      "auto r = R\"js(if (a > 1) { f(); })js\";\n";
  EXPECT_THAT(Describe(Gen(text)), IsEmpty());
}

TEST(GenerateTest, SkipMarkerExcludesItsLineAndNeedsAReason) {
  EXPECT_THAT(Gen("if (x > 1) f();  // mutation: skip(equivalent: f is idempotent)\n"), IsEmpty());
  absl::StatusOr<std::vector<Mutant>> bad = GenerateMutants("p/f.cc", "x = a < b;  // mutation: skip\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("p/f.cc:1"));
  EXPECT_THAT(bad.status().message(), HasSubstr("needs a reason"));
  EXPECT_FALSE(GenerateMutants("p/f.cc", "x = a < b;  // mutation: skip( )\n").ok());
}

TEST(GenerateTest, SkipFileMarkerExcludesTheWholeFileAndNeedsAReason) {
  const std::string harness =
      "// A test harness.\n// mutation: skip-file(test support: the judge, not the judged)\n"
      "x = a < b;\n";
  EXPECT_THAT(Gen("x = a < b;\n"), Not(IsEmpty()));
  EXPECT_THAT(Gen(harness), IsEmpty());
  absl::StatusOr<std::string> why = SkipFileReason("p/f.cc", harness);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_EQ(*why, "test support: the judge, not the judged");
  std::string reason = "stale";
  ASSERT_TRUE(GenerateMutants("p/f.cc", harness, &reason).ok());
  EXPECT_EQ(reason, "test support: the judge, not the judged");
  ASSERT_TRUE(GenerateMutants("p/f.cc", "x = a < b;\n", &reason).ok());
  EXPECT_EQ(reason, "");
  EXPECT_EQ(*SkipFileReason("p/f.cc", "x = a < b;\n"), "");
  absl::StatusOr<std::vector<Mutant>> bad =
      GenerateMutants("p/f.cc", "x = 1;\n// mutation: skip-file\nx = a < b;\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("p/f.cc:2"));
  EXPECT_THAT(bad.status().message(), HasSubstr("skip-file"));
  // Only on a comment line of its own: in a string it is text, and the file's mutants stay.
  EXPECT_EQ(Gen("const char* s = \"mutation: skip-file(no)\";\nx = a < b;\n").size(),
            Gen("x = a < b;\n").size());
  // The line marker beside it still works, and is not read as a skip-file without a reason.
  EXPECT_EQ(Gen("if (x > 1) f();  // mutation: skip(equivalent)\nx = a < b;\n").size(),
            Gen("x = a < b;\n").size());
}

TEST(GenerateTest, IdsAreStableAndCountPerOperatorPerLine) {
  std::string text = "int f() {\n  return a < b && c < d;\n}\n";
  std::vector<Mutant> ms = Gen(text);
  std::vector<std::string> ids;
  for (const Mutant& m : ms) ids.push_back(m.id);
  EXPECT_THAT(ids, ElementsAre("p/f.cc:2:RelationalOperator:0", "p/f.cc:2:LogicalOperator:0",
                               "p/f.cc:2:RelationalOperator:1"));
  // Same text, same ids; an edit elsewhere on other lines leaves them alone.
  std::vector<Mutant> again = Gen(text);
  ASSERT_EQ(again.size(), ms.size());
  for (std::size_t i = 0; i < ms.size(); ++i) EXPECT_EQ(again[i].id, ms[i].id);
  EXPECT_EQ(ms[0].line, 2);
  EXPECT_EQ(ms[0].column, 12);
}

TEST(GenerateTest, EveryMutantChangesTheFile) {
  std::string text =
      "int f(int x) {\n  if (x > 10 && x != 3) g(x);\n  return x <= 2;\n}\nbool h() { return true; }\n";
  for (const Mutant& m : Gen(text)) {
    std::string out;
    EXPECT_TRUE(ApplyMutant(m, text, &out)) << m.id;
    EXPECT_NE(out, text) << m.id;
  }
}

TEST(GenerateTest, WhichFilesAreSources) {
  EXPECT_TRUE(IsGeneratedSource("sandbox/runner.cc"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/runner_test.cc"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/runner_test_helper.cc"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/runner_test_util.cc"));
  EXPECT_FALSE(IsGeneratedSource("redteam/testing.cc"));
  EXPECT_FALSE(IsGeneratedSource("agent/agent_testing.cc"));
  EXPECT_TRUE(IsGeneratedSource("agent/latest.cc"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/runner.h"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/runner_bench.cc"));
  EXPECT_FALSE(IsGeneratedSource("sandbox/testdata/x.cc"));
}

}  // namespace
}  // namespace mutation
