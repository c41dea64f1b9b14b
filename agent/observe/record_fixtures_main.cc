// bazel run //agent/observe:record_fixtures -- DIR
//
// Writes the recorded fixtures of testdata/ into DIR with the agent's real loop, ScriptedPolicy and
// TraceWriter over in-memory demo tools (fake_demo.h). Timings (duration_ms, started_at, ended_at)
// are real measurements, so a regenerated file differs in those fields only; the golden OTLP file
// must be regenerated with it (testdata/README.md).
// mutation: skip-file(test support: writes the trace fixtures of testdata/, testonly)
#include <cstdio>
#include <string>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/observe/fake_demo.h"

namespace {

using agent::ScriptMode;
using agent::observe::FakeDemoOptions;

int Record(const std::string& dir, const std::string& name, std::vector<FakeDemoOptions> runs) {
  const std::string path = absl::StrCat(dir, "/", name);
  ::unlink(path.c_str());
  for (const FakeDemoOptions& options : runs) {
    absl::StatusOr<agent::RunSummary> s = agent::observe::RecordFakeDemo(options, path);
    if (!s.ok()) {
      std::fprintf(stderr, "record_fixtures: %s: %s\n", path.c_str(),
                   std::string(s.status().message()).c_str());
      return 1;
    }
    std::printf("%s: run %s %s after %d steps\n", path.c_str(), s->run_id.c_str(),
                std::string(agent::StopReasonName(s->stop_reason)).c_str(), s->steps);
  }
  return 0;
}

FakeDemoOptions Mode(ScriptMode mode, std::string run_id) {
  FakeDemoOptions o;
  o.mode = mode;
  o.run_id = std::move(run_id);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: record_fixtures DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  FakeDemoOptions loop = Mode(ScriptMode::kLoop, "1111111111111111aaaaaaaaaaaaaaaa");
  loop.max_steps = 4;
  FakeDemoOptions capped = Mode(ScriptMode::kGood, "3333333333333333cccccccccccccccc");
  capped.max_tool_calls = 2;
  FakeDemoOptions xss = Mode(ScriptMode::kGood, "4444444444444444dddddddddddddddd");
  xss.test_stdout = "<script>alert('owned')</script> & \"quotes\"\n";
  FakeDemoOptions failing = Mode(ScriptMode::kGood, "5555555555555555eeeeeeeeeeeeeeee");
  failing.tests_fail = true;
  int rc = 0;
  rc |= Record(dir, "good.jsonl", {Mode(ScriptMode::kGood, "0123456789abcdef0123456789abcdef")});
  rc |= Record(dir, "loop.jsonl", {loop});
  rc |= Record(dir, "escape.jsonl", {Mode(ScriptMode::kEscape, "2222222222222222bbbbbbbbbbbbbbbb")});
  rc |= Record(dir, "two_runs.jsonl",
               {Mode(ScriptMode::kGood, "0123456789abcdef0123456789abcdef"),
                Mode(ScriptMode::kEscape, "2222222222222222bbbbbbbbbbbbbbbb")});
  rc |= Record(dir, "max_tool_calls.jsonl", {capped});
  rc |= Record(dir, "xss.jsonl", {xss});
  rc |= Record(dir, "tests_fail.jsonl", {failing});
  return rc;
}
