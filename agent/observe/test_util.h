// Test helpers: reading fixtures from testdata/ (runfiles-relative) and parsing inline traces.
#ifndef AGENT_OBSERVE_TEST_UTIL_H_
#define AGENT_OBSERVE_TEST_UTIL_H_

#include <fstream>
#include <sstream>
#include <string>

#include "agent/observe/trace_reader.h"
#include "gtest/gtest.h"

namespace agent::observe {

inline std::string TestdataPath(const std::string& name) {
  return "agent/observe/testdata/" + name;
}

inline std::string ReadTestdata(const std::string& name) {
  std::ifstream in(TestdataPath(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << TestdataPath(name);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The fixture parsed; fails the test on a parse error.
inline TraceSet LoadTestdata(const std::string& name) {
  TraceSet set;
  absl::Status s = ReadTraceFile(TestdataPath(name), set);
  EXPECT_TRUE(s.ok()) << s;
  return set;
}

inline TraceSet ParseText(const std::string& text) {
  TraceSet set;
  absl::Status s = ParseTrace("inline", text, set);
  EXPECT_TRUE(s.ok()) << s;
  return set;
}

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_TEST_UTIL_H_
