// The runner's plumbing: subprocesses with deadlines, the scratch copy, Bazel output parsing,
// diff and shard parsing.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mutation/bazel.h"
#include "mutation/engine.h"
#include "mutation/mutant.h"
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

TEST(ProcessTest, ReportsExitCodeAndOutput) {
  std::string dir = TmpDir("proc1");
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo hello; exit 7"};
  spec.stdout_path = dir + "/out";
  absl::StatusOr<ProcessResult> r = RunProcess(spec, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(*ReadFile(dir + "/out"), "hello\n");
}

TEST(ProcessTest, DeadlineKillsTheWholeGroup) {
  std::string dir = TmpDir("proc2");
  ProcessSpec spec;
  // The shell ignores SIGINT and starts a grandchild: both must go.
  spec.argv = {"/bin/sh", "-c", "trap '' INT; sleep 30 & echo $! > " + dir + "/pid; wait"};
  spec.stdout_path = dir + "/out";
  spec.timeout_seconds = 0.5;
  spec.grace_seconds = 0.2;
  absl::StatusOr<ProcessResult> r = RunProcess(spec, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->interrupted);
  pid_t grandchild = std::atoi(ReadFile(dir + "/pid")->c_str());
  ASSERT_GT(grandchild, 0);
  // The grandchild may linger as a zombie of init for a moment; poll briefly.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(grandchild, 0) != 0;
    if (!gone) usleep(20000);
  }
  EXPECT_TRUE(gone);
}

TEST(ProcessTest, StopFlagInterrupts) {
  std::string dir = TmpDir("proc3");
  ProcessSpec spec;
  spec.argv = {"sleep", "30"};
  spec.stdout_path = dir + "/out";
  std::atomic<int> stop{SIGTERM};
  absl::StatusOr<ProcessResult> r = RunProcess(spec, &stop);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->term_signal, SIGINT);
}

TEST(ProcessTest, MissingBinaryExits127) {
  std::string dir = TmpDir("proc4");
  ProcessSpec spec;
  spec.argv = {dir + "/no-such-binary"};
  spec.stdout_path = dir + "/out";
  absl::StatusOr<ProcessResult> r = RunProcess(spec, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
}

TEST(ScratchTest, SyncCopiesOnlyChangesRemovesStaleFilesAndClearsDirt) {
  std::string repo = TmpDir("repo1");
  std::string cache = TmpDir("cache1");
  ASSERT_TRUE(MakeDirs(repo + "/p").ok());
  ASSERT_TRUE(WriteFileAtomic(repo + "/p/a.cc", "a").ok());
  ASSERT_TRUE(WriteFileAtomic(repo + "/p/b.cc", "b", 0755).ok());
  ASSERT_TRUE(MakeDirs(repo + "/bazel-out").ok());
  ASSERT_TRUE(WriteFileAtomic(repo + "/bazel-out/junk", "x").ok());
  absl::StatusOr<std::vector<std::string>> files = ListRepoFiles(repo, cache);
  ASSERT_TRUE(files.ok());
  EXPECT_THAT(*files, ElementsAre("p/a.cc", "p/b.cc"));

  Scratch scratch(cache + "/work");
  absl::StatusOr<SyncStats> s = scratch.Sync(repo, *files);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->copied, 2);
  struct stat st;
  ASSERT_EQ(stat((scratch.tree() + "/p/b.cc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  s = scratch.Sync(repo, *files);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->copied, 0);
  EXPECT_EQ(s->unchanged, 2);

  // A mutant left behind (as after SIGKILL) is named and repaired by the next sync.
  ASSERT_TRUE(scratch.WriteMutant("p/a.cc", "mutant").ok());
  EXPECT_EQ(*ReadFile(scratch.tree() + "/p/a.cc"), "mutant");
  EXPECT_EQ(*ReadFile(repo + "/p/a.cc"), "a");  // the checkout is never written
  unlink((repo + "/p/b.cc").c_str());
  files = ListRepoFiles(repo, cache);
  s = scratch.Sync(repo, *files);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->left_dirty, "p/a.cc");
  EXPECT_EQ(s->copied, 1);
  EXPECT_EQ(s->removed, 1);
  EXPECT_EQ(*ReadFile(scratch.tree() + "/p/a.cc"), "a");
  EXPECT_NE(access((scratch.tree() + "/p/b.cc").c_str(), F_OK), 0);
  EXPECT_TRUE(scratch.Sync(repo, *files)->left_dirty.empty());

  ASSERT_TRUE(scratch.WriteMutant("p/a.cc", "m2").ok());
  ASSERT_TRUE(scratch.Restore("p/a.cc", "a").ok());
  EXPECT_EQ(*ReadFile(scratch.tree() + "/p/a.cc"), "a");
  EXPECT_TRUE(scratch.Sync(repo, *files)->left_dirty.empty());
}

TEST(BazelTest, ParsesTheTestSummary) {
  std::string out =
      "INFO: Build completed, 2 tests FAILED, 9 total actions\n"
      "//sandbox:runner_test                                 FAILED in 0.4s\n"
      "  /root/.cache/bazel/.../test.log\n"
      "//sandbox:errors_test                        (cached) PASSED in 0.1s\n"
      "//agent:loop_test                                     TIMEOUT in 60.0s\n"
      "//agent:x_test                                        FAILED TO BUILD\n"
      "//agent:y_test                                        NO STATUS\n"
      "Executed 2 out of 3 tests: 1 test passes and 2 fail locally.\n";
  std::vector<TargetResult> r = ParseTestSummary(out);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].label, "//sandbox:runner_test");
  EXPECT_EQ(r[0].status, "FAILED");
  EXPECT_EQ(r[1].status, "PASSED");
  EXPECT_EQ(r[2].status, "TIMEOUT");
  EXPECT_EQ(r[3].status, "FAILED TO BUILD");
  EXPECT_EQ(r[4].status, "NO STATUS");
}

TEST(BazelTest, FileLabelUsesTheNearestPackage) {
  std::string ws = TmpDir("ws1");
  ASSERT_TRUE(MakeDirs(ws + "/a/b/c").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/a/BUILD.bazel", "").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/a/b/c/d.cc", "").ok());
  EXPECT_EQ(FileLabel(ws, "a/b/c/d.cc"), "//a:b/c/d.cc");
  ASSERT_TRUE(WriteFileAtomic(ws + "/a/b/BUILD", "").ok());
  EXPECT_EQ(FileLabel(ws, "a/b/c/d.cc"), "//a/b:c/d.cc");
  EXPECT_EQ(FileLabel(ws, "x/y.cc"), "");
}

TEST(EngineTest, ParsesShards) {
  int k = -1, n = -1;
  EXPECT_TRUE(ParseShard("0/1", &k, &n));
  EXPECT_TRUE(ParseShard("2/3", &k, &n));
  EXPECT_EQ(k, 2);
  EXPECT_EQ(n, 3);
  EXPECT_FALSE(ParseShard("3/3", &k, &n));
  EXPECT_FALSE(ParseShard("-1/3", &k, &n));
  EXPECT_FALSE(ParseShard("1", &k, &n));
  EXPECT_FALSE(ParseShard("a/b", &k, &n));
  EXPECT_FALSE(ParseShard("0/0", &k, &n));
}

TEST(EngineTest, ParsesDiffHunksOfTheNewSide) {
  std::string diff =
      "diff --git a/s/a.cc b/s/a.cc\n--- a/s/a.cc\n+++ b/s/a.cc\n"
      "@@ -3 +3 @@ x\n-old\n+new\n"
      "@@ -10,0 +11,2 @@\n+a\n+b\n"
      "@@ -20,2 +22,0 @@\n-gone\n-gone\n"
      "diff --git a/t.cc b/t.cc\n--- a/t.cc\n+++ b/t.cc\n@@ -1,2 +1,3 @@\n";
  auto hunks = ParseDiffHunks(diff);
  ASSERT_EQ(hunks.size(), 2u);
  EXPECT_EQ(hunks[0].first, "s/a.cc");
  EXPECT_THAT(hunks[0].second, ElementsAre(std::pair{3, 3}, std::pair{11, 12}));
  EXPECT_EQ(hunks[1].first, "t.cc");
  EXPECT_THAT(hunks[1].second, ElementsAre(std::pair{1, 3}));
}

TEST(EngineTest, NamesTheFailedGtestCases) {
  std::string out =
      "[ RUN      ] RunnerTest.OutputBomb\n"
      "[  FAILED  ] RunnerTest.OutputBomb (498 ms)\n"
      "[  FAILED  ] 2 tests, listed below:\n"
      "[  FAILED  ] RunnerTest.OutputBomb\n"
      "[  FAILED  ] PathTest/Walk.Escape/1, where GetParam() = 1\n";
  EXPECT_THAT(FailedCases(out), ElementsAre("RunnerTest.OutputBomb", "PathTest/Walk.Escape/1"));
  EXPECT_THAT(FailedCases("all fine\n"), testing::IsEmpty());
}

TEST(MutantTest, DiffShowsTheChangedLine) {
  Mutant m;
  m.file = "f.cc";
  std::string text = "a\nif (x < 1) y();\nb\n";
  m.offset = text.find("<");
  m.original = "<";
  m.replacement = "<=";
  LocateMutant(text, &m);
  EXPECT_EQ(MutantDiff(m, text),
            "--- a/f.cc\n+++ b/f.cc\n@@ -1,3 +1,3 @@\n a\n-if (x < 1) y();\n+if (x <= 1) y();\n b\n");
  Mutant wrong = m;
  wrong.original = ">";
  std::string out;
  EXPECT_FALSE(ApplyMutant(wrong, text, &out));
}

}  // namespace
}  // namespace mutation
