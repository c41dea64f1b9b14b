// Runs the official JSON-Schema-Test-Suite (draft 7) against the subset validator: every case whose
// schema uses only supported keywords. The suite comes from the Debian package json-schema-test-suite
// (installed by platforms/setup.sh) and is read from its absolute path, since it is machine data, not
// a build input we vendor.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/schema.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

using nlohmann::json;

constexpr char kSuiteDir[] = "/usr/share/json-schema-test-suite/tests/draft7";

std::vector<std::string> SuiteFiles() {
  std::vector<std::string> files;
  DIR* dir = opendir(kSuiteDir);
  if (dir == nullptr) return files;
  while (struct dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
      files.push_back(std::string(kSuiteDir) + "/" + name);
    }
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SchemaSuiteTest, Draft7CasesWithSupportedKeywordsPass) {
  std::vector<std::string> files = SuiteFiles();
  ASSERT_FALSE(files.empty()) << "no draft7 files under " << kSuiteDir
                              << ": install the Debian package json-schema-test-suite "
                                 "(platforms/setup.sh does)";
  int groups_run = 0, groups_skipped = 0, cases_run = 0;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    json groups = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(groups.is_array()) << file << " does not parse as a JSON array";
    for (const json& group : groups) {
      const json& schema = group.at("schema");
      if (!CheckSchema(schema).ok()) {
        ++groups_skipped;
        continue;
      }
      ++groups_run;
      for (const json& test : group.at("tests")) {
        ++cases_run;
        bool valid = Validate(schema, test.at("data")).empty();
        EXPECT_EQ(valid, test.at("valid").get<bool>())
            << file << ": " << group.at("description").get<std::string>() << " / "
            << test.at("description").get<std::string>() << "\n  schema " << schema.dump()
            << "\n  data " << test.at("data").dump() << "\n  violations "
            << FormatViolations(Validate(schema, test.at("data")));
      }
    }
  }
  // Printed so the count shows in the test log.
  std::printf("json-schema-test-suite draft7: %d cases run in %d groups; %d groups skipped "
              "(unsupported keywords)\n", cases_run, groups_run, groups_skipped);
  RecordProperty("cases_run", cases_run);
  EXPECT_GT(cases_run, 0) << "no case of the suite used only supported keywords";
}

}  // namespace
}  // namespace agent
