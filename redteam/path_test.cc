// Red-team group `path`: the workspace path policy (sandbox/workspace.h) against the ways real agents
// and real attackers have named files outside their root. Each case reproduces one incident.
//
// Layout of every case: <base>/root is the workspace; <base>/outside/secret.txt, <base>/root-evil/
// secret.txt and <base>/secret.txt lie outside it and hold "SECRET". A case passes only if no call
// returned "SECRET" and nothing outside the root changed. Cases that open files run against both
// opening strategies (openat2 and the component walk, which is the macOS path; the walk alone where
// openat2 is unsupported, as under --config=portable), in a loop inside the case, so each incident
// counts once.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <cerrno>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "redteam/testing.h"
#include "sandbox/errors.h"
#include "sandbox/workspace.h"

namespace redteam {
namespace {

using sandbox::OpenStrategy;
using sandbox::Workspace;

constexpr char kSecret[] = "SECRET";
constexpr uint64_t kCap = 1 << 20;

struct NamedStrategy {
  const char* name;
  OpenStrategy strategy;
};
constexpr NamedStrategy kStrategies[] = {{"openat2", OpenStrategy::kOpenat2},
                                         {"walk", OpenStrategy::kWalk}};

class PathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = base_.Join("root");
    outside_ = base_.Join("outside");
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(base_.Join("root-evil").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(outside_ + "/secret.txt", kSecret));
    ASSERT_TRUE(WriteFile(base_.Join("root-evil/secret.txt"), kSecret));
    ASSERT_TRUE(WriteFile(base_.Join("secret.txt"), kSecret));
    ASSERT_EQ(mkdir(In("a").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(In("a/b.txt"), "inside"));
    ASSERT_TRUE(WriteFile(In("a.txt"), "inside"));
    for (const NamedStrategy& s : kStrategies) {
      sandbox::WorkspaceOptions options;
      options.strategy = s.strategy;
      absl::StatusOr<Workspace> ws = Workspace::Open(root_, options);
      // openat2 is missing in the portable build (and on old kernels, macOS): the walk alone runs.
      if (s.strategy == OpenStrategy::kOpenat2 && CodeName(ws) == "EUNSUPPORTED") continue;
      ASSERT_TRUE(ws.ok()) << s.name << ": " << ws.status();
      workspaces_.push_back(*std::move(ws));
      strategy_names_.push_back(s.name);
    }
    ASSERT_FALSE(workspaces_.empty());
  }

  // Absolute path of `rel` inside the root, for setting up the case with plain system calls.
  std::string In(std::string_view rel) const { return root_ + "/" + std::string(rel); }

  // The outside files still hold "SECRET" and the outside directory gained nothing.
  void ExpectOutsideUntouched() const {
    EXPECT_EQ(ReadFile(outside_ + "/secret.txt"), kSecret);
    EXPECT_EQ(ReadFile(base_.Join("secret.txt")), kSecret);
    EXPECT_EQ(ReadFile(base_.Join("root-evil/secret.txt")), kSecret);
    int entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(outside_)) ++entries;
    EXPECT_EQ(entries, 1) << "a file was created outside the workspace, in " << outside_;
    int base_entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(base_.path())) {
      ++base_entries;
    }
    EXPECT_EQ(base_entries, 4) << "a file was created next to the workspace, in " << base_.path();
  }

  // Every entry point refuses `rel` with `code`, for both strategies, and nothing leaks or changes.
  void ExpectRefusedEverywhere(const std::string& rel, const std::string& code = "EPERM") {
    for (size_t i = 0; i < workspaces_.size(); ++i) {
      const Workspace& ws = workspaces_[i];
      SCOPED_TRACE(strategy_names_[i] + " path '" + rel + "'");
      EXPECT_EQ(CodeName(ws.Resolve(rel)), code);
      EXPECT_EQ(CodeName(ws.Resolve(rel, /*must_exist=*/true)), code);
      EXPECT_EQ(CodeName(ws.OpenBeneath(rel, O_RDONLY)), code);
      EXPECT_EQ(CodeName(ws.OpenBeneath(rel, O_WRONLY | O_CREAT | O_TRUNC)), code);
      absl::StatusOr<std::string> read = ws.ReadFile(rel, kCap);
      EXPECT_EQ(CodeName(read), code);
      if (read.ok()) {
        EXPECT_NE(*read, kSecret);
      }
      absl::StatusOr<std::string> range = ws.ReadRange(rel, 0, 64);
      EXPECT_EQ(CodeName(range), code);
      if (range.ok()) {
        EXPECT_NE(*range, kSecret);
      }
      EXPECT_EQ(CodeName(ws.WriteFileAtomic(rel, "pwned")), code);
    }
    ExpectOutsideUntouched();
  }

  // Lexical refusal: CheckRelative says EPERM too, before any file system access.
  void ExpectLexicallyRefused(const std::string& rel) {
    for (const Workspace& ws : workspaces_) {
      EXPECT_EQ(CodeName(ws.CheckRelative(rel)), "EPERM") << "path '" << rel << "'";
    }
    ExpectRefusedEverywhere(rel);
  }

  ScratchDir base_{"path"};
  std::string root_;
  std::string outside_;
  std::vector<Workspace> workspaces_;
  std::vector<std::string> strategy_names_;  // Parallel to workspaces_.
};

// Incident: the classic "../secret.txt" escape (the seed's escape demo).
TEST_F(PathTest, DotDotLeadingIsRefused) {
  ExpectLexicallyRefused("../secret.txt");
  ExpectLexicallyRefused("../outside/secret.txt");
}

// Incident: a checker that only looked at the first component let "a/../../x" through.
TEST_F(PathTest, DotDotInTheMiddleIsRefused) {
  ExpectLexicallyRefused("a/../../secret.txt");
  ExpectLexicallyRefused("a/b/../../../outside/secret.txt");
}

// Incident: ".." as the last component named the parent directory of the root.
TEST_F(PathTest, DotDotTrailingIsRefused) {
  ExpectLexicallyRefused("a/..");
  ExpectLexicallyRefused("a/../..");
}

// Incident: a bare ".." and its disguises ("./..", "a//..", "../") slipped past string matching.
TEST_F(PathTest, DotDotAloneAndDisguisedIsRefused) {
  for (const char* rel : {"..", "../", "./..", "a//../..", ".//..//"}) ExpectLexicallyRefused(rel);
}

// Incident: ".." that stays inside ("a/../a.txt") was allowed and later combined with a symlink to
// leave; the policy refuses every ".." component, even a harmless-looking one.
TEST_F(PathTest, DotDotThatStaysInsideIsStillRefused) {
  ExpectLexicallyRefused("a/../a.txt");
}

// Incident: an absolute path was joined onto the root and the join returned the absolute path.
TEST_F(PathTest, AbsolutePathIsRefused) {
  ExpectLexicallyRefused("/etc/passwd");
  ExpectLexicallyRefused(outside_ + "/secret.txt");
  ExpectLexicallyRefused("//etc/passwd");
}

// Incident: an absolute path that happens to point inside the root was accepted, then rewritten.
TEST_F(PathTest, AbsolutePathIntoTheRootIsRefusedToo) {
  for (const Workspace& ws : workspaces_) {
    EXPECT_EQ(CodeName(ws.CheckRelative(root_ + "/a.txt")), "EPERM");
    EXPECT_EQ(CodeName(ws.ReadFile(root_ + "/a.txt", kCap)), "EPERM");
  }
}

// Incident: a Windows-style "\..\secret.txt" passed a POSIX-only check and reached a Windows tool.
TEST_F(PathTest, BackslashLeadingIsRefused) {
  ExpectLexicallyRefused("\\etc\\passwd");
  ExpectLexicallyRefused("\\..\\secret.txt");
}

// Incident: "a\..\..\secret.txt" was feared to climb; on POSIX a backslash is an ordinary byte, so the
// name is one file inside the root. Whatever the policy decides, nothing outside may change.
TEST_F(PathTest, BackslashInsideIsAnOrdinaryByte) {
  const std::string rel = "a\\..\\..\\secret.txt";
  for (const Workspace& ws : workspaces_) {
    absl::Status write = ws.WriteFileAtomic(rel, "inside-literal");
    if (write.ok()) {
      EXPECT_EQ(ReadFile(In(rel)), "inside-literal") << "the literal name must land in the root";
      absl::StatusOr<std::string> read = ws.ReadFile(rel, kCap);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(*read, "inside-literal");
    } else {
      EXPECT_EQ(CodeName(write), "EPERM") << write;
    }
  }
  ExpectOutsideUntouched();
}

// Incident: "a.txt\0/../../secret.txt" was checked as a whole but opened up to the NUL by C code.
TEST_F(PathTest, NulByteIsRefusedNotTruncated) {
  ExpectLexicallyRefused(std::string("a.txt\0/../../secret.txt", 23));
  // Truncated at the NUL the name is an existing file: the policy must not quietly read it.
  const std::string nul_suffix("a.txt\0", 6);
  for (const Workspace& ws : workspaces_) {
    EXPECT_EQ(CodeName(ws.CheckRelative(nul_suffix)), "EPERM");
    EXPECT_EQ(CodeName(ws.ReadFile(nul_suffix, kCap)), "EPERM");
  }
}

// Incident: an empty path resolved to the root itself, and a write to it replaced the workspace.
TEST_F(PathTest, EmptyPathIsRefused) {
  ExpectLexicallyRefused("");
  struct stat st;
  ASSERT_EQ(stat(root_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << "the root must still be a directory";
}

// Incident: startswith("/tmp/root") accepted "/tmp/root-evil/secret.txt" (seed 13.6.4), here reached
// through an absolute symlink planted in the workspace.
TEST_F(PathTest, RootEvilPrefixTrapThroughAbsoluteSymlink) {
  ASSERT_EQ(symlink(base_.Join("root-evil/secret.txt").c_str(), In("evil").c_str()), 0);
  ExpectRefusedEverywhere("evil");
}

// Incident: the same prefix trap through a relative symlink "../root-evil/secret.txt".
TEST_F(PathTest, RootEvilPrefixTrapThroughRelativeSymlink) {
  ASSERT_EQ(symlink("../root-evil/secret.txt", In("evil").c_str()), 0);
  ExpectRefusedEverywhere("evil");
}

// Incident: a directory symlink to the sibling "root-evil" let writes land next to the workspace.
TEST_F(PathTest, RootEvilPrefixTrapThroughDirectorySymlink) {
  ASSERT_EQ(symlink(base_.Join("root-evil").c_str(), In("evil").c_str()), 0);
  ExpectRefusedEverywhere("evil/secret.txt");
  ExpectRefusedEverywhere("evil/planted.txt");
  EXPECT_FALSE(Exists(base_.Join("root-evil/planted.txt")));
}

// Incident: a repository shipped "config -> /etc/passwd" and the agent read it as a project file.
TEST_F(PathTest, SymlinkToOutsideFileIsRefused) {
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("link").c_str()), 0);
  ExpectRefusedEverywhere("link");
}

// Incident: a write to a planted symlink followed it and overwrote the file it pointed to.
TEST_F(PathTest, WriteThroughSymlinkNeverModifiesItsTarget) {
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("link").c_str()), 0);
  for (const Workspace& ws : workspaces_) {
    // Either refused, or the symlink itself is replaced by a regular file inside the root.
    absl::Status write = ws.WriteFileAtomic("link", "pwned");
    if (write.ok()) {
      EXPECT_EQ(ReadFile(In("link")), "pwned");
    }
    EXPECT_FALSE(ws.OpenBeneath("link", O_WRONLY | O_TRUNC).ok());
    EXPECT_FALSE(ws.OpenBeneath("link", O_WRONLY | O_APPEND).ok());
  }
  ExpectOutsideUntouched();
}

// Incident: "vendor -> /usr/lib" made every file of a system directory look like workspace content.
TEST_F(PathTest, SymlinkToOutsideDirectoryIsRefused) {
  ASSERT_EQ(symlink(outside_.c_str(), In("vendor").c_str()), 0);
  ExpectRefusedEverywhere("vendor/secret.txt");
  ExpectRefusedEverywhere("vendor/new.txt");
  ExpectRefusedEverywhere("vendor/deep/er/new.txt");
  EXPECT_FALSE(Exists(outside_ + "/deep")) << "parent creation followed the symlink";
}

// Incident: a checker resolved one level of symlink; a chain a -> b -> c -> outside got through.
TEST_F(PathTest, SymlinkChainOutIsRefused) {
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("c").c_str()), 0);
  ASSERT_EQ(symlink("c", In("b").c_str()), 0);
  ASSERT_EQ(symlink("b", In("chain").c_str()), 0);
  ExpectRefusedEverywhere("chain");
}

// Incident: a symlink loop sent a hand-written resolver into infinite recursion.
TEST_F(PathTest, SymlinkLoopFailsInsteadOfHanging) {
  ASSERT_EQ(symlink("loop2", In("loop1").c_str()), 0);
  ASSERT_EQ(symlink("loop1", In("loop2").c_str()), 0);
  for (const Workspace& ws : workspaces_) {
    EXPECT_FALSE(ws.Resolve("loop1", /*must_exist=*/true).ok());
    EXPECT_FALSE(ws.ReadFile("loop1", kCap).ok());
    EXPECT_FALSE(ws.OpenBeneath("loop1/x", O_RDONLY).ok());
  }
}

// Incident: fs.list followed a directory symlink and listed (and sized) files outside the root.
TEST_F(PathTest, ListFilesDoesNotFollowSymlinksOut) {
  ASSERT_EQ(symlink(outside_.c_str(), In("vendor").c_str()), 0);
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("link").c_str()), 0);
  for (const Workspace& ws : workspaces_) {
    absl::StatusOr<std::vector<sandbox::FileEntry>> files = ws.ListFiles();
    ASSERT_TRUE(files.ok()) << files.status();
    for (const sandbox::FileEntry& f : *files) {
      EXPECT_FALSE(f.path.starts_with("vendor/")) << f.path;
      EXPECT_NE(f.path, "link") << "a symlink is not a regular file of the workspace";
    }
    bool saw_inside = false;
    for (const sandbox::FileEntry& f : *files) saw_inside |= f.path == "a/b.txt";
    EXPECT_TRUE(saw_inside) << "the listing must still show the real files";
  }
}

// Swaps two directory entries atomically, again and again, until told to stop. RENAME_EXCHANGE makes
// each name always exist, so every open sees one of the two objects, never a missing file.
class Swapper {
 public:
  Swapper(std::string a, std::string b) : a_(std::move(a)), b_(std::move(b)) {}
  ~Swapper() { Stop(); }
  // False when the file system cannot exchange names (the case then skips).
  bool Start() {
    if (renameat2(AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE) != 0) return false;
    thread_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
        renameat2(AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE);
      }
    });
    return true;
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::string a_, b_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Runs `attempt` (true: the call succeeded, false: refused) until both outcomes were seen often enough
// (`each`) to show the race was exercised, or `bound` attempts were made; `each` = 0: exactly `bound`.
template <typename Attempt>
void RaceLoop(Attempt attempt, int each = 200, int bound = 100000) {
  int succeeded = 0, refused = 0;
  for (int i = 0; i < bound && (each == 0 || succeeded < each || refused < each); ++i) {
    (attempt() ? succeeded : refused)++;
  }
  ::testing::Test::RecordProperty("succeeded", succeeded);
  ::testing::Test::RecordProperty("refused", refused);
}

// Incident: check-then-open TOCTOU (seed 13.6.1): the file passed the check, then was swapped for a
// symlink to a secret before open. Raced in a loop against a thread exchanging the two names.
TEST_F(PathTest, SymlinkSwappedInDuringReadNeverLeaks) {
  ASSERT_TRUE(WriteFile(In("x"), "inside"));
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("x_link").c_str()), 0);
  Swapper swapper(In("x"), In("x_link"));
  if (!swapper.Start()) GTEST_SKIP() << "renameat2(RENAME_EXCHANGE) unsupported: " << errno;
  for (const Workspace& ws : workspaces_) {
    bool leaked = false;
    RaceLoop([&] {
      absl::StatusOr<std::string> read = ws.ReadFile("x", kCap);
      if (read.ok() && *read != "inside") leaked = true;
      return read.ok();
    });
    EXPECT_FALSE(leaked) << "a read returned the target of a swapped-in symlink";
  }
  swapper.Stop();
  ExpectOutsideUntouched();
}

// Incident: the same race one level up: a parent directory swapped for a symlink to an outside
// directory between the check of "d" and the open of "d/secret.txt".
TEST_F(PathTest, DirectorySwappedForSymlinkDuringReadNeverLeaks) {
  ASSERT_EQ(mkdir(In("d").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(In("d/secret.txt"), "inside"));
  ASSERT_EQ(symlink(outside_.c_str(), In("d_link").c_str()), 0);
  Swapper swapper(In("d"), In("d_link"));
  if (!swapper.Start()) GTEST_SKIP() << "renameat2(RENAME_EXCHANGE) unsupported: " << errno;
  for (const Workspace& ws : workspaces_) {
    bool leaked = false;
    RaceLoop([&] {
      absl::StatusOr<std::string> read = ws.ReadFile("d/secret.txt", kCap);
      if (read.ok() && *read != "inside") leaked = true;
      absl::StatusOr<std::string> range = ws.ReadRange("d/secret.txt", 0, 64);
      if (range.ok() && *range != "inside") leaked = true;
      return read.ok();
    });
    EXPECT_FALSE(leaked) << "a read went through a swapped-in directory symlink";
  }
  swapper.Stop();
  ExpectOutsideUntouched();
}

// Incident: a write raced with a directory swap and created a file in the directory the symlink named.
TEST_F(PathTest, DirectorySwappedForSymlinkDuringWriteNeverEscapes) {
  ASSERT_EQ(mkdir(In("d").c_str(), 0755), 0);
  ASSERT_EQ(symlink(outside_.c_str(), In("d_link").c_str()), 0);
  Swapper swapper(In("d"), In("d_link"));
  if (!swapper.Start()) GTEST_SKIP() << "renameat2(RENAME_EXCHANGE) unsupported: " << errno;
  for (const Workspace& ws : workspaces_) {
    // Atomic writes fsync, so far fewer rounds fit in the same time.
    RaceLoop([&] { return ws.WriteFileAtomic("d/planted.txt", "pwned").ok(); }, 30, 5000);
  }
  swapper.Stop();
  ExpectOutsideUntouched();
}

// Incident: a file swapped for a symlink to a secret while the agent wrote it; the write followed the
// link and overwrote the secret. Atomic writes replace the name, so at worst the symlink is replaced.
// The attacker thread keeps re-planting the symlink (rename over the name), so every write races it.
TEST_F(PathTest, SymlinkSwappedInDuringWriteNeverWritesThrough) {
  ASSERT_TRUE(WriteFile(In("x"), "inside"));
  std::atomic<bool> stop{false};
  std::thread planter([&] {
    const std::string link_tmp = In(".planted_link");
    const std::string file_tmp = In(".planted_file");
    while (!stop.load(std::memory_order_relaxed)) {
      unlink(link_tmp.c_str());
      if (symlink((outside_ + "/secret.txt").c_str(), link_tmp.c_str()) == 0) {
        rename(link_tmp.c_str(), In("x").c_str());
      }
      if (WriteFile(file_tmp, "inside")) rename(file_tmp.c_str(), In("x").c_str());
    }
  });
  for (const Workspace& ws : workspaces_) {
    // Renaming over the name mostly succeeds whatever it is, so count attempts, not outcomes.
    RaceLoop([&] { return ws.WriteFileAtomic("x", "pwned").ok(); }, 0, 100);
  }
  stop = true;
  planter.join();
  ExpectOutsideUntouched();
}

// Decision (README "hard links"): a hard link is the same inode under a second name, which may lie
// outside the root (linked in by a command the agent ran); no path check can see that name. The policy
// refuses a regular file with more than one link (EPERM) for reading and for in-place writing, and
// O_TRUNC must not apply before that refusal. Incident: a planted hard link to a secret was read, or
// truncated through "open(O_TRUNC)" before the check.
TEST_F(PathTest, HardLinkToOutsideFileIsRefusedByDefault) {
  if (link((outside_ + "/secret.txt").c_str(), In("hard").c_str()) != 0) {
    GTEST_SKIP() << "link() across these directories failed: " << std::strerror(errno);
  }
  for (const Workspace& ws : workspaces_) {
    EXPECT_EQ(CodeName(ws.ReadFile("hard", kCap)), "EPERM");
    EXPECT_EQ(CodeName(ws.ReadRange("hard", 0, 64)), "EPERM");
    EXPECT_EQ(CodeName(ws.OpenBeneath("hard", O_RDONLY)), "EPERM");
    EXPECT_EQ(CodeName(ws.OpenBeneath("hard", O_WRONLY | O_TRUNC)), "EPERM");
  }
  ExpectOutsideUntouched();
}

// Decision (README "hard links"), the opt-in: a caller that knows its workspace has hard links (a git
// object store) sets allow_hard_links and then reads them like any file.
TEST_F(PathTest, HardLinkIsReadOnlyWhenAllowedExplicitly) {
  if (link((outside_ + "/secret.txt").c_str(), In("hard").c_str()) != 0) {
    GTEST_SKIP() << "link() across these directories failed: " << std::strerror(errno);
  }
  sandbox::WorkspaceOptions options;
  options.allow_hard_links = true;
  absl::StatusOr<Workspace> ws = Workspace::Open(root_, options);
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ(ws->ReadFile("hard", kCap).value_or("<error>"), kSecret);
}

// Incident: an in-place write through a hard link changed the outside file too. Atomic writes
// (temporary file + rename) replace the directory entry, which breaks the link instead.
TEST_F(PathTest, HardLinkWriteBreaksTheLinkInsteadOfWritingThrough) {
  if (link((outside_ + "/secret.txt").c_str(), In("hard").c_str()) != 0) {
    GTEST_SKIP() << "link() across these directories failed: " << std::strerror(errno);
  }
  for (const Workspace& ws : workspaces_) {
    ASSERT_TRUE(ws.WriteFileAtomic("hard", "replaced").ok());
    EXPECT_EQ(ReadFile(In("hard")), "replaced");
  }
  ExpectOutsideUntouched();
}

// Incident: "./a/./b.txt" and "a//b.txt" were refused as unknown files, so the agent looped retrying.
TEST_F(PathTest, DotComponentsAreNormalisedNotRefused) {
  for (const Workspace& ws : workspaces_) {
    absl::StatusOr<std::string> normal = ws.CheckRelative("./a/./b.txt");
    ASSERT_TRUE(normal.ok()) << normal.status();
    EXPECT_EQ(*normal, "a/b.txt");
    absl::StatusOr<std::string> doubled = ws.CheckRelative("a//b.txt");
    ASSERT_TRUE(doubled.ok()) << doubled.status();
    EXPECT_EQ(*doubled, "a/b.txt");
    absl::StatusOr<std::string> read = ws.ReadFile("./a/./b.txt", kCap);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, "inside");
  }
}

// Incident: "." named the root directory and a write to it replaced the whole workspace.
TEST_F(PathTest, DotAloneIsNotAFileToReadOrWrite) {
  for (const Workspace& ws : workspaces_) {
    EXPECT_FALSE(ws.ReadFile(".", kCap).ok());
    EXPECT_FALSE(ws.WriteFileAtomic(".", "pwned").ok());
    EXPECT_FALSE(ws.WriteFileAtomic("./", "pwned").ok());
  }
  struct stat st;
  ASSERT_EQ(stat(root_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(ReadFile(In("a.txt")), "inside");
}

// Incident: a 300-byte file name crashed a fixed-size buffer in a path joiner.
TEST_F(PathTest, OverlongComponentIsInvalidNotACrash) {
  const std::string rel(300, 'n');
  for (const Workspace& ws : workspaces_) {
    EXPECT_EQ(CodeName(ws.ReadFile(rel, kCap)), "EINVAL");
    EXPECT_EQ(CodeName(ws.WriteFileAtomic(rel, "x")), "EINVAL");
  }
  ExpectOutsideUntouched();
}

// Incident: a 6000-byte path "a/a/a/..." made a component-walking writer create thousands of nested
// directories (an inode bomb), and a recursive resolver exhaust its stack. Past PATH_MAX it is refused
// before anything is created.
TEST_F(PathTest, PathLongerThanPathMaxIsRefusedBeforeCreatingAnything) {
  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "a/";
  deep += "b.txt";
  for (const Workspace& ws : workspaces_) {
    for (const std::string& code : {CodeName(ws.ReadFile(deep, kCap)), CodeName(ws.Resolve(deep))}) {
      EXPECT_TRUE(code == "EINVAL" || code == "ENOENT") << code;
    }
    EXPECT_EQ(CodeName(ws.WriteFileAtomic(deep, "x")), "EINVAL");
  }
  EXPECT_FALSE(Exists(In("a/a"))) << "the write created directories before refusing";
  ExpectOutsideUntouched();
}

// Incident: a Latin-1 file name ("caf\xe9.txt") made a UTF-8-decoding checker throw and skip the check.
TEST_F(PathTest, NonUtf8NamesStayInsideAndRoundTrip) {
  const std::string latin1 = "caf\xe9.txt";
  const std::string junk = "\xff\xfe\x80.bin";
  for (const Workspace& ws : workspaces_) {
    ASSERT_TRUE(ws.WriteFileAtomic(latin1, "latin1").ok());
    ASSERT_TRUE(ws.WriteFileAtomic(junk, "junk").ok());
    EXPECT_EQ(ws.ReadFile(latin1, kCap).value_or("<error>"), "latin1");
    EXPECT_EQ(ws.ReadFile(junk, kCap).value_or("<error>"), "junk");
  }
  EXPECT_EQ(ReadFile(In(latin1)), "latin1") << "the bytes of the name must not be re-encoded";
  // Invalid UTF-8 does not hide a "..": the component is still refused.
  ExpectLexicallyRefused("\xff/../../secret.txt");
}

// Incident: an overlong UTF-8 encoding of '/' ("\xc0\xaf") was decoded to a separator by one layer
// and not by another. To the kernel it is two ordinary bytes: the name stays one component.
TEST_F(PathTest, OverlongUtf8SlashIsNotASeparator) {
  const std::string rel = "..\xc0\xaf" "secret.txt";
  for (const Workspace& ws : workspaces_) {
    absl::Status write = ws.WriteFileAtomic(rel, "literal");
    if (write.ok()) {
      EXPECT_EQ(ReadFile(In(rel)), "literal");
    }
    absl::StatusOr<std::string> read = ws.ReadFile(rel, kCap);
    if (read.ok()) {
      EXPECT_EQ(*read, "literal");
    }
  }
  ExpectOutsideUntouched();
}

// Incident (seed 13.6.4): on a case-insensitive file system "LINK" opened the planted "link" that a
// case-sensitive deny check had not matched. Judge the real object, not the spelling.
TEST_F(PathTest, CaseVariantOfASymlinkOutIsRefused) {
  ASSERT_TRUE(WriteFile(In("case_probe"), "x"));
  struct stat st;
  if (stat(In("CASE_PROBE").c_str(), &st) != 0) {
    GTEST_SKIP() << "the file system under " << root_
                 << " is case-sensitive (stat of the upper-case name fails), so case variants "
                    "name different files";
  }
  ASSERT_EQ(symlink((outside_ + "/secret.txt").c_str(), In("link").c_str()), 0);
  ExpectRefusedEverywhere("LINK");
  ExpectRefusedEverywhere("Link");
}

// Incident: "/proc/self/root" is the whole file system; a symlink to it in the workspace is a way out.
TEST_F(PathTest, ProcSelfRootSymlinkIsRefused) {
  ASSERT_EQ(symlink("/proc/self/root", In("r").c_str()), 0);
  ASSERT_EQ(symlink(("/proc/self/root" + outside_ + "/secret.txt").c_str(), In("rs").c_str()), 0);
  ExpectRefusedEverywhere("r" + outside_ + "/secret.txt");
  ExpectRefusedEverywhere("rs");
}

// Incident: "/proc/self/cwd" follows the agent's own working directory, which lies outside the root.
TEST_F(PathTest, ProcSelfCwdSymlinkIsRefused) {
  char saved[4096];
  ASSERT_NE(getcwd(saved, sizeof saved), nullptr);
  ASSERT_EQ(chdir(outside_.c_str()), 0);
  ASSERT_EQ(symlink("/proc/self/cwd", In("cwd").c_str()), 0);
  ExpectRefusedEverywhere("cwd/secret.txt");
  ASSERT_EQ(chdir(saved), 0);
}

// Incident: "/proc/self/fd/N" is a magic link to whatever the agent has open, even a deleted file.
TEST_F(PathTest, ProcSelfFdMagicLinkIsRefused) {
  const int fd = open((outside_ + "/secret.txt").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(symlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), In("fd").c_str()), 0);
  ExpectRefusedEverywhere("fd");
  close(fd);
}

// Incident: the root was given through a symlink and the checker compared real paths to the unresolved
// root, refusing everything (or, the other way round, accepting the symlink's siblings).
TEST_F(PathTest, RootReachedThroughSymlinkIsJudgedByItsRealPath) {
  ASSERT_EQ(symlink(root_.c_str(), base_.Join("alias").c_str()), 0);
  absl::StatusOr<Workspace> ws = Workspace::Open(base_.Join("alias"));
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ(ws->root(), root_);
  EXPECT_EQ(ws->ReadFile("a/b.txt", kCap).value_or("<error>"), "inside");
  ASSERT_EQ(symlink(base_.Join("root-evil/secret.txt").c_str(), In("evil").c_str()), 0);
  EXPECT_EQ(CodeName(ws->ReadFile("evil", kCap)), "EPERM");
  EXPECT_EQ(CodeName(ws->Resolve("evil")), "EPERM");
  ASSERT_EQ(unlink(base_.Join("alias").c_str()), 0);
}

// Incident: a named pipe planted in the workspace made fs.read block forever on open().
TEST_F(PathTest, FifoInWorkspaceIsRefusedWithoutHanging) {
  ASSERT_EQ(mkfifo(In("pipe").c_str(), 0644), 0);
  for (const Workspace& ws : workspaces_) {
    std::future<absl::StatusOr<std::string>> read =
        std::async(std::launch::async, [&ws] { return ws.ReadFile("pipe", kCap); });
    if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      // Unblock the reader by becoming the writer, so the suite ends; the case has failed.
      const int unblock = open(In("pipe").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (unblock >= 0) close(unblock);
      ADD_FAILURE() << "ReadFile of a FIFO blocked; it must refuse anything but a regular file";
    }
    EXPECT_FALSE(read.get().ok());
  }
}

// Incident: a workspace root given as a file (or a missing path) produced a Workspace that refused
// nothing, because every check was relative to an invalid fd.
TEST_F(PathTest, OpeningABadRootFails) {
  EXPECT_FALSE(Workspace::Open(In("a.txt")).ok()) << "a regular file is not a root";
  EXPECT_FALSE(Workspace::Open(base_.Join("missing")).ok());
  EXPECT_FALSE(Workspace::Open("").ok());
}

}  // namespace
}  // namespace redteam
