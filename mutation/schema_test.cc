#include "mutation/schema.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mutation/bazel.h"
#include "mutation/generate.h"
#include "mutation/schemata.h"

namespace mutation {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct Built {
  std::vector<Mutant> mutants;
  Schema schema;
};

// Generates every mutant of `text` and builds its schema with ids 1..n.
Built Build(const std::string& text, const std::set<int>& excluded = {}) {
  Built b;
  absl::StatusOr<std::vector<Mutant>> gen = GenerateMutants("a/f.cc", text);
  EXPECT_TRUE(gen.ok()) << gen.status();
  b.mutants = *gen;
  std::vector<int> ids;
  for (std::size_t i = 0; i < b.mutants.size(); ++i) ids.push_back(static_cast<int>(i) + 1);
  b.schema = BuildSchema("a/f.cc", text, b.mutants, ids, excluded);
  return b;
}

// The schema body: what follows the `#line 1` directive.
std::string Body(const Schema& s) {
  std::size_t at = s.text.find("#line 1 \"a/f.cc\"\n");
  EXPECT_NE(at, std::string::npos);
  return s.text.substr(at + std::string("#line 1 \"a/f.cc\"\n").size());
}

int Id(const Built& b, const std::string& mutator, const std::string& replacement) {
  for (std::size_t i = 0; i < b.mutants.size(); ++i) {
    if (b.mutants[i].mutator == mutator && b.mutants[i].replacement == replacement) {
      return static_cast<int>(i) + 1;
    }
  }
  ADD_FAILURE() << "no " << mutator << " -> " << replacement;
  return -1;
}

TEST(BuildSchemaTest, EveryMutantIsEitherSwitchedOrFallsBackWithAReason) {
  Built b = Build("int F(int x) {\n  if (x > 10) return 1;\n  return x == 3;\n}\n");
  std::set<std::size_t> seen(b.schema.embedded.begin(), b.schema.embedded.end());
  for (const auto& [i, why] : b.schema.fallback) {
    EXPECT_FALSE(why.empty());
    EXPECT_TRUE(seen.insert(i).second) << "mutant " << i << " both switched and fallen back";
  }
  EXPECT_EQ(seen.size(), b.mutants.size());
  EXPECT_THAT(b.schema.fallback, IsEmpty());
}

TEST(BuildSchemaTest, LinesKeepTheirNumbersAfterThePrelude) {
  std::string text = "int F(int x) {\n  if (x > 10) return 1;\n  return 0;\n}\n";
  Built b = Build(text);
  std::string body = Body(b.schema);
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
  EXPECT_THAT(b.schema.text, HasSubstr("namespace mutation_schema"));
  EXPECT_THAT(b.schema.text, HasSubstr("MUTATION_ACTIVE"));
}

TEST(BuildSchemaTest, AConditionIsOneSiteWithEveryVariantAsABool) {
  Built b = Build("void G(int x) {\n  if (x > 10) H();\n}\n");
  int rel = Id(b, kRelational, ">=");
  int neg = Id(b, kNegateCondition, "(!(x > 10))");
  int plus = Id(b, kConstantPlus, "11");
  std::string body = Body(b.schema);
  EXPECT_THAT(body, HasSubstr(absl::StrCat("mutation_schema::On(", rel,
                                           ") ? static_cast<bool>(x >= 10) : ")));
  EXPECT_THAT(body, HasSubstr(absl::StrCat("mutation_schema::On(", neg,
                                           ") ? static_cast<bool>(!(x > 10)) : ")));
  EXPECT_THAT(body, HasSubstr(absl::StrCat("mutation_schema::On(", plus,
                                           ") ? static_cast<bool>(x > 11) : ")));
  // The original comes last: with no switch on, the condition is what was written.
  EXPECT_THAT(body, HasSubstr(": static_cast<bool>(x > 10))) H();"));
}

TEST(BuildSchemaTest, AReturnExpressionIsOneSite) {
  Built b = Build("bool F(int a, int b) {\n  return a < b;\n}\n");
  int rel = Id(b, kRelational, "<=");
  EXPECT_THAT(Body(b.schema),
              HasSubstr(absl::StrCat("return (mutation_schema::On(", rel, ") ? (a <= b) : (a < b));")));
}

TEST(BuildSchemaTest, AComparisonOutsideConditionsIsBoundedByItsOperands) {
  Built b = Build("void F(int a, int n) {\n  bool small = a + 1 < n * 2;\n  Use(small);\n}\n");
  int rel = Id(b, kRelational, "<=");
  EXPECT_THAT(Body(b.schema),
              HasSubstr(absl::StrCat("bool small = (mutation_schema::On(", rel,
                                     ") ? (a + 1 <= n * 2) : ")));
}

TEST(BuildSchemaTest, OperandsFollowPrecedence) {
  // A looser operator (&&, ?:) ends an operand; a tighter one (+, <<) belongs to it; a character
  // literal is an operand even though the lexer blanks its content.
  Built b = Build(
      "void F(char last, int line, bool n) {\n"
      "  int total = last == '\\n' ? line - 1 : line;\n"
      "  bool neg = !n && line << 2 < 0;\n"
      "  Use(total, neg);\n"
      "}\n");
  std::string body = Body(b.schema);
  EXPECT_THAT(body, HasSubstr(absl::StrCat("int total = (mutation_schema::On(",
                                           Id(b, kRelational, "!="), ") ? (last != '\\n') : ")));
  // The comparison's site nests in the && site (!n && line << 2 < 0), whose variants include it.
  EXPECT_THAT(body, HasSubstr(absl::StrCat("mutation_schema::On(", Id(b, kRelational, "<="),
                                           ") ? (!n && line << 2 <= 0) : ")));
  EXPECT_THAT(body, HasSubstr(absl::StrCat("bool neg = (mutation_schema::On(",
                                           Id(b, kLogical, "||"), ") ? (!n || line << 2 < 0) : ")));
}

TEST(BuildSchemaTest, ChainedComparisonsOfOneLevelFallBack) {
  Built b = Build("void F(int a, int b, int c) {\n  bool x = a < b < c;\n  Use(x);\n}\n");
  int fell = 0;
  for (const auto& [i, why] : b.schema.fallback) fell += b.mutants[i].mutator == kRelational;
  EXPECT_EQ(fell, 2);
}

TEST(BuildSchemaTest, ADeletedCallIsAStatementSwitch) {
  Built b = Build("void F() {\n  int x = 0;\n  Flush(x);\n}\n");
  int del = Id(b, kDeleteCall, "");
  EXPECT_THAT(Body(b.schema),
              HasSubstr(absl::StrCat("if (mutation_schema::On(", del, ")) {  } else { Flush(x); }")));
}

TEST(BuildSchemaTest, ConstantsWhereTheLanguageNeedsOneFallBack) {
  Built b = Build("constexpr int kMax = 64;\nint F(int x) {\n  switch (x) {\n    case 3: return 1;\n  }\n  return x + 64;\n}\n");
  std::vector<int> fallback_lines;
  for (const auto& [i, why] : b.schema.fallback) fallback_lines.push_back(b.mutants[i].line);
  std::sort(fallback_lines.begin(), fallback_lines.end());
  fallback_lines.erase(std::unique(fallback_lines.begin(), fallback_lines.end()),
                       fallback_lines.end());
  EXPECT_THAT(fallback_lines, ElementsAre(1, 4));
  EXPECT_THAT(Body(b.schema), HasSubstr("constexpr int kMax = 64;"));
  EXPECT_THAT(Body(b.schema), HasSubstr("return (mutation_schema::On("));
}

TEST(BuildSchemaTest, ATableInAConstexprInitializerFallsBack) {
  Built b = Build("constexpr Range kRanges[] = {\n    {\"10.0.0.0\", 8},\n    {\"::1\", 128},\n};\n"
                  "int F(int x) {\n  return x + 1;\n}\n");
  for (const auto& [i, why] : b.schema.fallback) {
    EXPECT_LE(b.mutants[i].line, 3);
    EXPECT_EQ(why, "inside a constexpr function or initializer");
  }
  EXPECT_EQ(b.schema.fallback.size(), 4u);  // 8 and 128, each +1 and -1
  EXPECT_THAT(Body(b.schema), HasSubstr("    {\"10.0.0.0\", 8},\n"));
}

TEST(BuildSchemaTest, AnExpressionThatContinuesOnAnotherLineFallsBack) {
  Built b = Build("bool F(int a, int b) {\n  bool ok = Check(a,\n      a < b);\n  return ok;\n}\n");
  bool found = false;
  for (const auto& [i, why] : b.schema.fallback) {
    if (b.mutants[i].mutator == kRelational) {
      found = true;
      EXPECT_THAT(why, HasSubstr("one line"));
    }
  }
  EXPECT_TRUE(found);
  EXPECT_THAT(Body(b.schema), HasSubstr("      a < b);"));
}

TEST(BuildSchemaTest, ExcludedLinesStayAsWritten) {
  std::string text = "int F(int x) {\n  if (x > 10) return 1;\n  return 0;\n}\n";
  Built b = Build(text, {2});
  EXPECT_THAT(Body(b.schema), HasSubstr("  if (x > 10) return 1;\n"));
  for (std::size_t i : b.schema.embedded) EXPECT_NE(b.mutants[i].line, 2);
  EXPECT_THAT(b.schema.fallback, Not(IsEmpty()));
}

TEST(BuildSchemaTest, NothingSwitchableLeavesTheBodyUnchanged) {
  std::string text = "// only a comment\nint x;\n";
  Built b = Build(text);
  EXPECT_EQ(Body(b.schema), text);
  EXPECT_THAT(b.schema.embedded, IsEmpty());
}

TEST(BuildSchemaTest, FunctionBodiesGetAProbeAtTheirTop) {
  std::string text =
      "namespace n {\n"
      "int F(int x = 5) {\n"
      "  return x;\n"
      "}\n"
      "struct S {\n"
      "  int G() const { if (a > 1) { return 2; } return 3; }\n"
      "  int a;\n"
      "};\n"
      "constexpr int H() {\n"
      "  return 4;\n"
      "}\n"
      "}  // namespace n\n";
  absl::StatusOr<std::vector<Mutant>> gen = GenerateMutants("a/f.cc", text);
  ASSERT_TRUE(gen.ok());
  std::vector<int> ids;
  for (std::size_t i = 0; i < gen->size(); ++i) ids.push_back(static_cast<int>(i) + 1);
  Schema s = BuildSchema("a/f.cc", text, *gen, ids, {}, 100);
  ASSERT_EQ(s.probes.size(), 2u) << s.text;
  EXPECT_EQ(s.probes[0].id, 100);
  EXPECT_EQ(s.probes[0].first_line, 2);
  EXPECT_EQ(s.probes[0].last_line, 4);
  EXPECT_EQ(s.probes[1].id, 101);
  EXPECT_EQ(s.probes[1].first_line, 6);
  EXPECT_EQ(s.probes[1].last_line, 6);
  EXPECT_THAT(Body(s), HasSubstr(") { mutation_schema::On(100);\n  return x;"));
  EXPECT_THAT(Body(s), HasSubstr("int G() const { mutation_schema::On(101); if ("));
  // A constexpr function cannot call the switch: no probe, and its mutants fall back.
  EXPECT_THAT(Body(s), HasSubstr("constexpr int H() {\n  return 4;\n"));
  int constexpr_fallbacks = 0;
  for (const auto& [i, why] : s.fallback) {
    if ((*gen)[i].line == 10) {
      EXPECT_EQ(why, "inside a constexpr function or initializer");
      ++constexpr_fallbacks;
    }
  }
  EXPECT_EQ(constexpr_fallbacks, 2);  // 4 -> 5 and 4 -> 3
  // Without a first id there are no probes.
  EXPECT_THAT(BuildSchema("a/f.cc", text, *gen, ids, {}).probes, IsEmpty());
}

TEST(BlamedLinesTest, ErrorsNotesAndInstantiationsOfTheFileAreBlamed) {
  std::string out =
      "a/f.cc: In function 'int F(int)':\n"
      "a/f.cc:12:7: error: size of array is not an integral constant-expression\n"
      "   12 |   char b[n];\n"
      "a/f.cc:3:15: note: declared here\n"
      "In file included from /usr/include/c++/12/vector:64,\n"
      "                 from a/f.cc:2:\n"
      "/usr/include/c++/12/bits/stl_vector.h: In instantiation of 'void f()':\n"
      "a/f.cc:40:10:   required from here\n"
      "/usr/include/c++/12/bits/stl_vector.h:9:3: error: no match\n"
      "b/a/f.cc:77:1: warning: unused variable\n"
      "a/f.cc: In function 'int G()':\n"
      "a/f.cc:90:1: warning: unused [-Wunused]\n";
  EXPECT_THAT(BlamedLines(out, "a/f.cc"), ElementsAre(3, 12, 40));
}

TEST(BlamedLinesTest, WarningsTurnedErrorsAreBlamed) {
  EXPECT_THAT(BlamedLines("a/f.cc: In function 'x':\n"
                          "a/f.cc:53:10: error: comparison is always true [-Werror=type-limits]\n",
                          "a/f.cc"),
              ElementsAre(53));
}

TEST(ReplaceSchemaLineTest, ReplacesAnOriginalLineByItsNumber) {
  Built b = Build("int F() {\n  return 0;\n}\n");
  std::string out;
  ASSERT_TRUE(ReplaceSchemaLine(b.schema.text, 2, "  return 7;", &out));
  EXPECT_THAT(Body({out, {}, {}, {}}), HasSubstr("int F() {\n  return 7;\n}\n"));
  EXPECT_FALSE(ReplaceSchemaLine(b.schema.text, 99, "x", &out));
}

TEST(ParseGtestListTest, SuitesCasesParametersAndDisabled) {
  std::string out =
      "Running main() from gtest_main.cc\n"
      "RunnerTest.\n"
      "  KillsTheGroup\n"
      "  DISABLED_Slow\n"
      "Prefix/ParamTest.\n"
      "  Works/0  # GetParam() = 3\n";
  EXPECT_THAT(ParseGtestList(out),
              ElementsAre("RunnerTest.KillsTheGroup", "Prefix/ParamTest.Works/0"));
}

TEST(WorkspaceNameTest, NamedAndUnnamed) {
  EXPECT_EQ(WorkspaceName("workspace(name = \"sandboxed_agent\")\n"), "sandboxed_agent");
  EXPECT_EQ(WorkspaceName("# nothing\n"), "__main__");
}

TEST(ExpandTestArgTest, LocationsBecomeRunfilesPaths) {
  EXPECT_EQ(ExpandTestArg("$(rootpath :run_demo)", "agent"), "agent/run_demo");
  EXPECT_EQ(ExpandTestArg("$(location //agent:tool)", "agent/observe"), "agent/tool");
  EXPECT_EQ(ExpandTestArg("$(location testdata/good.jsonl)", "agent/observe"),
            "agent/observe/testdata/good.jsonl");
  EXPECT_EQ(ExpandTestArg("--trace=$(execpath //x)", "a"), "--trace=x/x");
  EXPECT_EQ(ExpandTestArg("plain", "a"), "plain");
  EXPECT_EQ(ExpandTestArg("$(HOME)", "a"), "$(HOME)");
}

}  // namespace
}  // namespace mutation
