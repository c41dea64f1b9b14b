// Red-team group `output`: what a command or a file can do to the agent by being large, binary, late
// or endless. Each case reproduces one incident (seed 13.4.1: "200 MB of printing OOMs the parent").
// The runner's caps keep the bombs cheap: the 200 MB and 100 MB cases cost well under a second each.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "redteam/run_testing.h"
#include "redteam/testing.h"
#include "sandbox/errors.h"
#include "sandbox/runner.h"
#include "sandbox/workspace.h"

namespace redteam {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class OutputTest : public ::testing::Test {
 protected:
  sandbox::RunRequest Shell(const std::string& script, uint64_t cap = kMiB) {
    sandbox::RunRequest request = ShellRequest(dir_.path(), script, marker_);
    request.stdout_cap = cap;
    request.stderr_cap = cap;
    return request;
  }
  sandbox::RunResult MustRun(const sandbox::RunRequest& request) {
    RescuedRun run = RunWithRescue(request, absl::Seconds(30), {}, marker_);
    EXPECT_FALSE(run.hung) << "Run did not return; the case had to kill its processes";
    EXPECT_TRUE(run.result.ok()) << run.result.status();
    return run.result.ok() ? *std::move(run.result) : sandbox::RunResult{};
  }
  static bool AllBytesAre(const std::string& data, char c) {
    return data.find_first_not_of(c) == std::string::npos;
  }

  ScratchDir dir_{"output"};
  std::string marker_ = UniqueMarker("output");
};

// Incident: `yes`-style 200 MB on stdout was collected whole and took the agent down (seed 13.4.1).
TEST_F(OutputTest, StdoutBombIsCappedAndCounted) {
  sandbox::RunResult r = MustRun(Shell("head -c 209715200 /dev/zero"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.out.truncated);
  EXPECT_LE(r.out.data.size(), kMiB);
  EXPECT_GT(r.out.data.size(), 0u);
  EXPECT_TRUE(AllBytesAre(r.out.data, '\0'));
  EXPECT_EQ(r.out.total_bytes, 200 * kMiB) << "past the cap the runner must keep counting";
}

// Incident: the same bomb on stderr, which the first fix forgot to cap.
TEST_F(OutputTest, StderrBombIsCappedAndCounted) {
  sandbox::RunResult r = MustRun(Shell("head -c 209715200 /dev/zero >&2"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.err.truncated);
  EXPECT_LE(r.err.data.size(), kMiB);
  EXPECT_EQ(r.err.total_bytes, 200 * kMiB);
  EXPECT_FALSE(r.out.truncated);
  EXPECT_EQ(r.out.total_bytes, 0u);
}

// Incident: a runner that drained stdout to EOF before reading stderr deadlocked when the child
// filled the stderr pipe first; both streams must be drained at once.
TEST_F(OutputTest, BothStreamsBombingAtOnceNeitherDeadlocks) {
  sandbox::RunResult r = MustRun(
      Shell("head -c 104857600 /dev/zero >&2 & head -c 104857600 /dev/zero; wait"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out) << "a deadlock shows up as a timeout";
  EXPECT_TRUE(r.out.truncated);
  EXPECT_TRUE(r.err.truncated);
  EXPECT_EQ(r.out.total_bytes, 100 * kMiB);
  EXPECT_EQ(r.err.total_bytes, 100 * kMiB);
}

// Incident: a line-oriented reader waited for a newline that never came in 100 MB of output.
TEST_F(OutputTest, HundredMegabyteLineWithoutNewlineIsCapped) {
  sandbox::RunResult r = MustRun(Shell("head -c 104857600 /dev/zero | tr '\\0' a"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out.truncated);
  EXPECT_LE(r.out.data.size(), kMiB);
  EXPECT_TRUE(AllBytesAre(r.out.data, 'a'));
  EXPECT_EQ(r.out.total_bytes, 100 * kMiB);
}

// Incident: output was stored as a C string and cut at the first NUL byte.
TEST_F(OutputTest, BinaryOutputIsKeptByteForByte) {
  std::string bytes;
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  }
  ASSERT_TRUE(WriteFile(dir_.Join("blob"), bytes));
  sandbox::RunResult r = MustRun(Shell("cat blob"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.out.truncated);
  EXPECT_EQ(r.out.total_bytes, bytes.size());
  EXPECT_EQ(r.out.data, bytes);
}

// Incident: an off-by-one marked output of exactly the cap as truncated, and cap + 1 as complete.
TEST_F(OutputTest, TruncationFlagIsExactAtTheCap) {
  sandbox::RunResult exact = MustRun(Shell("head -c 4096 /dev/zero", 4096));
  EXPECT_FALSE(exact.out.truncated);
  EXPECT_EQ(exact.out.data.size(), 4096u);
  sandbox::RunResult over = MustRun(Shell("head -c 4097 /dev/zero", 4096));
  EXPECT_TRUE(over.out.truncated) << "one byte over the cap must be visible";
  EXPECT_EQ(over.out.data.size(), 4096u);
  EXPECT_EQ(over.out.total_bytes, 4097u);
}

// Incident: a bomb on stderr evicted the one line of stdout that said what went wrong.
TEST_F(OutputTest, StdoutSurvivesAStderrBomb) {
  sandbox::RunResult r = MustRun(Shell("echo verdict; head -c 52428800 /dev/zero >&2"));
  EXPECT_EQ(r.out.data, "verdict\n");
  EXPECT_FALSE(r.out.truncated);
  EXPECT_TRUE(r.err.truncated);
}

// Incident: the parent exited, a background grandchild kept the pipe open and kept printing; the
// runner either waited forever or returned and left the grandchild writing into the next run.
TEST_F(OutputTest, BackgroundGrandchildPrintingAfterParentExitsIsGone) {
  sandbox::RunRequest request =
      Shell("echo early; (while :; do echo late; sleep 0.01; done) & echo $! > grandchild.pid");
  request.wall_timeout = absl::Seconds(2);
  RescuedRun run = RunWithRescue(request, absl::Seconds(20), {dir_.Join("grandchild.pid")}, marker_);
  EXPECT_FALSE(run.hung) << "Run waited for a pipe a grandchild holds open";
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  // The parent's own line is kept whatever the grandchild printed around it.
  EXPECT_NE(run.result->out.data.find("early\n"), std::string::npos) << run.result->out.data;
  std::optional<pid_t> grandchild = AwaitPidFile(dir_.Join("grandchild.pid"));
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_TRUE(ProcessGone(*grandchild)) << "the grandchild outlived Run";
  EXPECT_TRUE(ProcessesWithMarker(marker_).empty());
}

// Incident: a test wrote an endless log file and filled the disk (seed 13.4.2, RLIMIT_FSIZE).
TEST_F(OutputTest, FileSizeBombIsStoppedBySigxfsz) {
  sandbox::RunRequest request = Shell("exec head -c 10485760 /dev/zero > big");
  request.limits.file_size_bytes = kMiB;
  sandbox::RunResult r = MustRun(request);
  EXPECT_EQ(r.term_signal, SIGXFSZ);
  EXPECT_FALSE(r.exit_code.has_value());
  struct stat st;
  ASSERT_EQ(stat(dir_.Join("big").c_str(), &st), 0);
  EXPECT_LE(static_cast<uint64_t>(st.st_size), kMiB);
}

// Incident: fs.read of a multi-gigabyte file tried to allocate it whole. An 8 GiB sparse file costs no
// disk; the read must say EFBIG (suggested action read_range) without reading it.
TEST_F(OutputTest, ReadOfHugeFileIsEfbigWithReadRangeHint) {
  const int fd = open(dir_.Join("huge.bin").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8LL << 30), 0);
  close(fd);
  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(dir_.path());
  ASSERT_TRUE(ws.ok()) << ws.status();
  absl::StatusOr<std::string> read = ws->ReadFile("huge.bin", 256 << 10);
  ASSERT_EQ(CodeName(read), "EFBIG");
  EXPECT_EQ(sandbox::Info(sandbox::CodeOf(read.status())).suggested_action, "read_range");
  absl::StatusOr<std::string> tail = ws->ReadRange("huge.bin", (8ULL << 30) - 10, 100);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(*tail, std::string(10, '\0')) << "a range past the end is cut at the end";
}

// Incident: an off-by-one refused a file of exactly the cap, or accepted one byte more.
TEST_F(OutputTest, ReadCapIsExactAtTheBoundary) {
  ASSERT_TRUE(WriteFile(dir_.Join("at_cap"), std::string(1000, 'x')));
  ASSERT_TRUE(WriteFile(dir_.Join("over_cap"), std::string(1001, 'x')));
  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(dir_.path());
  ASSERT_TRUE(ws.ok()) << ws.status();
  absl::StatusOr<std::string> at = ws->ReadFile("at_cap", 1000);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->size(), 1000u);
  EXPECT_EQ(CodeName(ws->ReadFile("over_cap", 1000)), "EFBIG");
}

// Incident: the size was checked with fstat, then the file grew while it was read and the reader
// returned far more than the cap. The cap must hold on the bytes returned, not only on st_size.
TEST_F(OutputTest, FileGrowingDuringReadNeverExceedsTheCap) {
  ASSERT_TRUE(WriteFile(dir_.Join("growing.log"), std::string(1000, 'g')));
  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(dir_.path());
  ASSERT_TRUE(ws.ok()) << ws.status();
  std::atomic<bool> stop{false};
  std::thread grower([&] {
    const int fd = open(dir_.Join("growing.log").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    const std::string chunk(64 << 10, 'g');
    while (fd >= 0 && !stop.load()) {
      if (write(fd, chunk.data(), chunk.size()) < 0) break;
      if (lseek(fd, 0, SEEK_END) > (64 << 20) && ftruncate(fd, 1000) != 0) break;
    }
    if (fd >= 0) close(fd);
  });
  constexpr uint64_t kSmallCap = 256 << 10;
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<std::string> read = ws->ReadFile("growing.log", kSmallCap);
    if (read.ok()) {
      EXPECT_LE(read->size(), kSmallCap);
      if (read->size() > kSmallCap) break;
    } else {
      EXPECT_EQ(CodeName(read), "EFBIG");
    }
  }
  stop = true;
  grower.join();
}

// Incident: read_range(offset=0, length=2^64-1) allocated `length` bytes up front and aborted.
TEST_F(OutputTest, ReadRangeWithAbsurdLengthDoesNotAllocateIt) {
  ASSERT_TRUE(WriteFile(dir_.Join("small.txt"), "small"));
  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(dir_.path());
  ASSERT_TRUE(ws.ok()) << ws.status();
  absl::StatusOr<std::string> all = ws->ReadRange("small.txt", 0, UINT64_MAX);
  if (all.ok()) {
    EXPECT_EQ(*all, "small");
  } else {
    EXPECT_EQ(CodeName(all), "EINVAL");
  }
  absl::StatusOr<std::string> past = ws->ReadRange("small.txt", UINT64_MAX, UINT64_MAX);
  if (past.ok()) {
    EXPECT_EQ(*past, "");
  } else {
    EXPECT_EQ(CodeName(past), "EINVAL");
  }
}

// Incident: the runner kept everything the child printed "just in case" and its memory grew with the
// bomb. Peak RSS (VmHWM, reset through clear_refs) may grow by the caps and a buffer, not by 200 MB.
TEST_F(OutputTest, RunnerMemoryStaysBoundedDuringABomb) {
  const int clear = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (clear < 0 || write(clear, "5", 1) != 1) {
    if (clear >= 0) close(clear);
    GTEST_SKIP() << "cannot reset the peak RSS through /proc/self/clear_refs";
  }
  close(clear);
  auto peak_kb = [] {
    std::optional<std::string> status = ReadFile("/proc/self/status");
    const size_t at = status.has_value() ? status->find("VmHWM:") : std::string::npos;
    return at == std::string::npos ? -1L : std::atol(status->c_str() + at + 6);
  };
  auto rss_kb = [] {
    std::optional<std::string> status = ReadFile("/proc/self/status");
    const size_t at = status.has_value() ? status->find("VmRSS:") : std::string::npos;
    return at == std::string::npos ? -1L : std::atol(status->c_str() + at + 6);
  };
  const long before = rss_kb();
  sandbox::RunResult r = MustRun(Shell("head -c 209715200 /dev/zero; head -c 209715200 /dev/zero >&2"));
  const long peak = peak_kb();
  ASSERT_GT(before, 0);
  ASSERT_GT(peak, 0);
  EXPECT_EQ(r.out.total_bytes, 200 * kMiB);
  EXPECT_LT(peak - before, 32 * 1024) << "peak RSS grew by " << (peak - before) << " KiB";
}

}  // namespace
}  // namespace redteam
