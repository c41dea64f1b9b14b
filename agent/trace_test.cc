// The trace writer's file contract (trace.h): every line is one whole JSON object ending in '\n',
// stamped with trace_version, type and run_id; opening without truncate appends after what is there,
// also while another writer appends to the same file; truncate empties it first.
#include "agent/trace.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sandbox/errors.h"

namespace agent {
namespace {

using json = nlohmann::json;

std::string TracePath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file as lines; fails the test on a partial last line or a line that is not JSON.
std::vector<json> Lines(const std::string& path) {
  const std::string text = ReadAll(path);
  std::vector<json> out;
  if (text.empty()) return out;
  EXPECT_EQ(text.back(), '\n') << "the last line is not terminated";
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    json parsed = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded()) << "not one JSON object per line: " << line;
    out.push_back(parsed);
  }
  return out;
}

TEST(TraceWriterTest, EachLineIsOneStampedObjectEndingInNewline) {
  const std::string path = TracePath("stamped.jsonl");
  auto trace = TraceWriter::Open(path, /*truncate=*/true);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_TRUE(trace->Write("step", "run-a", {{"step", 1}}).ok());
  ASSERT_TRUE(trace->Write("run_end", "run-a", {{"steps", 1}}).ok());
  const std::string text = ReadAll(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  std::vector<json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], json({{"step", 1}, {"type", "step"}, {"run_id", "run-a"},
                            {"trace_version", kTraceVersion}}));
  EXPECT_EQ(lines[1]["type"], "run_end");
}

TEST(TraceWriterTest, ReopeningWithoutTruncateAppendsAfterTheExistingLines) {
  const std::string path = TracePath("reopen.jsonl");
  {
    auto first = TraceWriter::Open(path, /*truncate=*/true);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(first->Write("run_start", "run-1", {{"goal", "a long first line to overwrite"}}).ok());
    ASSERT_TRUE(first->Write("run_end", "run-1", json::object()).ok());
  }
  auto second = TraceWriter::Open(path, /*truncate=*/false);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->Write("run_start", "run-2", json::object()).ok());
  std::vector<json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["run_id"], "run-1");
  EXPECT_EQ(lines[1]["run_id"], "run-1");
  EXPECT_EQ(lines[2]["run_id"], "run-2");
}

// Two runs sharing one file (issue 8 groups by run_id): each write lands at the end, never over the
// other writer's lines.
TEST(TraceWriterTest, TwoWritersOnOneFileKeepEveryLine) {
  const std::string path = TracePath("shared.jsonl");
  auto a = TraceWriter::Open(path, /*truncate=*/true);
  auto b = TraceWriter::Open(path, /*truncate=*/false);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(a->Write("step", "run-a", {{"step", 1}}).ok());
  ASSERT_TRUE(b->Write("step", "run-b", {{"step", 1}}).ok());
  ASSERT_TRUE(a->Write("step", "run-a", {{"step", 2}}).ok());
  std::vector<json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["run_id"], "run-a");
  EXPECT_EQ(lines[1]["run_id"], "run-b");
  EXPECT_EQ(lines[2]["step"], 2);
}

TEST(TraceWriterTest, TruncateEmptiesAnExistingTrace) {
  const std::string path = TracePath("truncate.jsonl");
  {
    auto old = TraceWriter::Open(path, /*truncate=*/false);
    ASSERT_TRUE(old.ok());
    ASSERT_TRUE(old->Write("run_start", "old", json::object()).ok());
  }
  auto fresh = TraceWriter::Open(path, /*truncate=*/true);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(ReadAll(path), "");
  ASSERT_TRUE(fresh->Write("run_start", "new", json::object()).ok());
  std::vector<json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["run_id"], "new");
}

TEST(TraceWriterTest, InvalidUtf8IsReplacedNotFatal) {
  const std::string path = TracePath("utf8.jsonl");
  auto trace = TraceWriter::Open(path, /*truncate=*/true);
  ASSERT_TRUE(trace.ok());
  ASSERT_TRUE(trace->Write("step", "run", {{"out", std::string("a\xff" "b")}}).ok());
  std::vector<json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["out"], "a\xEF\xBF\xBD" "b");
}

TEST(TraceWriterTest, AMovedFromWriterRefusesAndAMissingDirectoryIsNamed) {
  auto trace = TraceWriter::Open(TracePath("moved.jsonl"), /*truncate=*/true);
  ASSERT_TRUE(trace.ok());
  TraceWriter moved = std::move(*trace);
  EXPECT_TRUE(moved.Write("step", "run", json::object()).ok());
  absl::Status s = trace->Write("step", "run", json::object());
  EXPECT_EQ(sandbox::CodeOf(s), sandbox::ErrorCode::kEINTERNAL) << s;
  auto missing = TraceWriter::Open(TracePath("no/such/dir/t.jsonl"), /*truncate=*/true);
  EXPECT_EQ(sandbox::CodeOf(missing.status()), sandbox::ErrorCode::kENOENT) << missing.status();
}

// Open descriptors of this process (a writer that forgets to close leaks one per run).
int OpenFds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

TEST(TraceWriterTest, MoveAssignmentClosesTheOldFileAndWritesTheNew) {
  const int before = OpenFds();
  {
    auto a = TraceWriter::Open(TracePath("assign-a.jsonl"), /*truncate=*/true);
    auto b = TraceWriter::Open(TracePath("assign-b.jsonl"), /*truncate=*/true);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(OpenFds(), before + 2);
    *a = std::move(*b);
    EXPECT_EQ(OpenFds(), before + 1) << "the file a had open was not closed";
    EXPECT_TRUE(a->Write("step", "run", json{{"to", "b"}}).ok());
    EXPECT_EQ(sandbox::CodeOf(b->Write("step", "run", json::object())),
              sandbox::ErrorCode::kEINTERNAL);
    TraceWriter& same = *a;
    *a = std::move(same);  // Assigning a writer to itself keeps it open.
    EXPECT_TRUE(a->Write("step", "run", json{{"to", "b"}}).ok());
    EXPECT_EQ(OpenFds(), before + 1);
  }
  EXPECT_EQ(OpenFds(), before) << "a destroyed writer left its file open";
  EXPECT_EQ(Lines(TracePath("assign-a.jsonl")).size(), 0u);
  EXPECT_EQ(Lines(TracePath("assign-b.jsonl")).size(), 2u);
}

}  // namespace
}  // namespace agent
