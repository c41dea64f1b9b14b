// Independent check of redteam/case_counts.h: every group in the table has a binary, and listing that
// binary's cases (--gtest_list_tests, which does not run them) yields at least the minimum. This
// catches what the per-binary check in count_main.cc cannot: a group binary removed from BUILD.bazel or
// built without count_main.cc.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "redteam/case_counts.h"

namespace redteam {
namespace {

std::string GroupBinary(std::string_view group) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (workspace ? workspace : "sandboxed_agent") +
         "/redteam/" + std::string(group) + "_test";
}

// Runs `binary --gtest_list_tests` and counts the case lines (indented) it prints; -1 if it fails.
int ListedCases(const std::string& binary) {
  const std::string command = "'" + binary + "' --gtest_list_tests 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  int cases = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[2] != '\n') ++cases;
  }
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return cases;
}

// Regression: a whole group binary was dropped from BUILD and the suite shrank without a failure.
TEST(CaseCounts, EveryGroupBinaryListsAtLeastItsMinimum) {
  int total = 0;
  for (const GroupCount& g : kGroupCounts) {
    const int listed = ListedCases(GroupBinary(g.group));
    EXPECT_GE(listed, g.min_cases) << "group '" << g.group << "' (" << GroupBinary(g.group)
                                   << "): -1 means the binary is missing or refused to list";
    total += listed;
  }
  EXPECT_GE(total, 60) << "the suite must keep at least 60 cases in all";
}

}  // namespace
}  // namespace redteam
