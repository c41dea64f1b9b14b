// main() of every red-team group binary: refuses to run when the group has lost a case.
//
// The group name comes from the build (REDTEAM_GROUP, set by redteam_group_test in redteam.bzl). The
// count is taken from gtest's registry before any filter applies, so `--gtest_filter` or Bazel's
// --test_filter cannot hide a deleted case, and DISABLED_ cases (known bugs kept as regressions) count
// as cases. A shortfall fails the binary with exit status 1 and a line naming the group and both counts.
#include <cstdio>
#include <string_view>

#include "gtest/gtest.h"
#include "redteam/case_counts.h"

#ifndef REDTEAM_GROUP
#error "REDTEAM_GROUP must name the red-team group of this binary (see redteam/redteam.bzl)"
#endif

namespace {

struct Counts {
  int total = 0;
  int disabled = 0;
};

Counts CountRegisteredCases() {
  Counts counts;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(t);
      ++counts.total;
      if (std::string_view(info.name()).starts_with("DISABLED_") ||
          std::string_view(info.test_suite_name()).starts_with("DISABLED_")) {
        ++counts.disabled;
      }
    }
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  constexpr std::string_view kGroup = REDTEAM_GROUP;
  const int minimum = redteam::MinCasesFor(kGroup);
  const Counts counts = CountRegisteredCases();
  if (minimum < 0) {
    std::fprintf(stderr, "redteam: group '%.*s' is not in redteam/case_counts.h; add it there\n",
                 static_cast<int>(kGroup.size()), kGroup.data());
    return 1;
  }
  if (counts.total < minimum) {
    std::fprintf(stderr,
                 "redteam: group '%.*s' has %d cases, fewer than the %d in redteam/case_counts.h: "
                 "a case was deleted. Restore it, or lower the minimum on purpose.\n",
                 static_cast<int>(kGroup.size()), kGroup.data(), counts.total, minimum);
    return 1;
  }
  std::fprintf(stderr, "redteam: group '%.*s': %d cases (%d disabled as known bugs), minimum %d\n",
               static_cast<int>(kGroup.size()), kGroup.data(), counts.total, counts.disabled,
               minimum);
  return RUN_ALL_TESTS();
}
