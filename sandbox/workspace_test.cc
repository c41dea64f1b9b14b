#include "sandbox/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- Test scaffolding: plain POSIX calls, so the code under test never builds its own fixture. ----

std::string MakeTempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string templ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/wsXXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return "";
  }
  std::unique_ptr<char, decltype(&::free)> real(::realpath(templ.c_str(), nullptr), &::free);
  return real ? std::string(real.get()) : templ;
}

void MakeDir(const std::string& path) {
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path << ": " << std::strerror(errno);
}

void PutFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

std::string GetFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Symlink(const std::string& target, const std::string& link) {
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << link << ": " << std::strerror(errno);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::set<std::string> DirNames(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        names.insert(e->d_name);
      }
    }
    ::closedir(d);
  }
  return names;
}

bool AnyTempFile(const std::string& dir) {
  for (const std::string& name : DirNames(dir)) {
    if (absl::StartsWith(name, ".sbtmp.")) return true;
  }
  return false;
}

ErrorCode Code(const absl::Status& s) { return CodeOf(s); }

const char* StrategyName(OpenStrategy s) {
  switch (s) {
    case OpenStrategy::kAuto: return "Auto";
    case OpenStrategy::kOpenat2: return "Openat2";
    case OpenStrategy::kWalk: return "Walk";
  }
  return "?";
}

// base/
//   root/            the workspace: inside.txt, dir/nested.txt
//   root-evil/       shares a string prefix with root: secret.txt
//   outside/         secret.txt, f
struct Tree {
  std::string base, root, evil, outside;

  static Tree Make() {
    Tree t;
    t.base = MakeTempDir();
    t.root = t.base + "/root";
    t.evil = t.base + "/root-evil";
    t.outside = t.base + "/outside";
    MakeDir(t.root);
    MakeDir(t.evil);
    MakeDir(t.outside);
    MakeDir(t.root + "/dir");
    PutFile(t.root + "/inside.txt", "inside");
    PutFile(t.root + "/dir/nested.txt", "nested");
    PutFile(t.evil + "/secret.txt", "EVIL");
    PutFile(t.outside + "/secret.txt", "SECRET");
    PutFile(t.outside + "/f", "SECRET-D");
    return t;
  }
};

absl::StatusOr<Workspace> OpenWith(const std::string& root, OpenStrategy strategy) {
  WorkspaceOptions options;
  options.strategy = strategy;
  return Workspace::Open(root, options);
}

// ---- Lexical policy: independent of the strategy. ----

class LexicalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = Tree::Make();
    auto ws = OpenWith(tree_.root, OpenStrategy::kWalk);
    ASSERT_TRUE(ws.ok()) << ws.status();
    ws_.emplace(std::move(*ws));
  }
  Tree tree_;
  std::optional<Workspace> ws_;
};

TEST_F(LexicalTest, RefusesEachUnsafeShapeWithItsReason) {
  struct Case {
    std::string input;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"../secret.txt", "parent traversal not allowed: '../secret.txt'"},
      {"..", "parent traversal not allowed: '..'"},
      {"a/../b", "parent traversal not allowed: 'a/../b'"},
      {"a/..", "parent traversal not allowed: 'a/..'"},
      {"./..", "parent traversal not allowed: './..'"},
      {"a//..//b", "parent traversal not allowed: 'a//..//b'"},
      {"/etc/passwd", "absolute path not allowed: '/etc/passwd'"},
      {"//etc", "absolute path not allowed: '//etc'"},
      {"/../x", "absolute path not allowed: '/../x'"},
      {"\\etc\\passwd", "absolute path not allowed: '\\\\etc\\\\passwd'"},
      {"a\\..\\b", "backslash not allowed in path: 'a\\\\..\\\\b'"},
      {"a\\b", "backslash not allowed in path: 'a\\\\b'"},
      {"", "empty path not allowed: ''"},
      {std::string("a\0b", 3), "NUL byte not allowed in path: 'a\\x00b'"},
      {std::string("\0", 1), "NUL byte not allowed in path: '\\x00'"},
  };
  for (const Case& c : cases) {
    const auto result = ws_->CheckRelative(c.input);
    ASSERT_FALSE(result.ok()) << c.input;
    EXPECT_EQ(Code(result.status()), ErrorCode::kEPERM) << c.input;
    EXPECT_EQ(result.status().message(), c.message);
    EXPECT_EQ(Info(ErrorCode::kEPERM).suggested_action, "stop");
    // Every public entry point applies the same lexical policy.
    EXPECT_EQ(Code(ws_->Resolve(c.input).status()), ErrorCode::kEPERM) << c.input;
    EXPECT_EQ(Code(ws_->ReadFile(c.input, 100).status()), ErrorCode::kEPERM) << c.input;
    EXPECT_EQ(Code(ws_->WriteFileAtomic(c.input, "x")), ErrorCode::kEPERM) << c.input;
  }
}

TEST_F(LexicalTest, NormalisesDotsAndRepeatedSlashes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a/./b//c", "a/b/c"}, {"./a", "a"},     {"a/", "a"},           {"a/.", "a"},
      {".", "."},            {"./", "."},      {".//.", "."},         {"...", "..."},
      {"a..b/..c", "a..b/..c"}, {".hidden", ".hidden"}, {"C:/x", "C:/x"},
  };
  for (const auto& [input, want] : cases) {
    auto got = ws_->CheckRelative(input);
    ASSERT_TRUE(got.ok()) << input << ": " << got.status();
    EXPECT_EQ(*got, want) << input;
  }
}

TEST_F(LexicalTest, LongPathsAreInvalidNotCrashes) {
  const std::string at_limit = std::string(kMaxPathBytes / 2, 'a') + "/" +
                               std::string(kMaxPathBytes / 2 - 1, 'a');
  // Within PATH_MAX but with components over NAME_MAX: EINVAL, naming the component.
  auto long_component = ws_->CheckRelative(at_limit);
  ASSERT_FALSE(long_component.ok());
  EXPECT_EQ(Code(long_component.status()), ErrorCode::kEINVAL);
  EXPECT_THAT(std::string(long_component.status().message()), StartsWith("path component too long"));

  const std::string too_long(kMaxPathBytes + 1, 'a');
  auto result = ws_->CheckRelative(too_long);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(Code(result.status()), ErrorCode::kEINVAL);
  EXPECT_THAT(std::string(result.status().message()), StartsWith("path too long: 4096 bytes > 4095"));
  EXPECT_LT(result.status().message().size(), 200u) << "the message must not echo 4 KB";
  EXPECT_EQ(Code(ws_->ReadFile(too_long, 10).status()), ErrorCode::kEINVAL);

  // Many short components up to PATH_MAX are fine lexically.
  std::string deep;
  while (deep.size() + 2 <= kMaxPathBytes) deep += deep.empty() ? "d" : "/d";
  EXPECT_TRUE(ws_->CheckRelative(deep).ok());
}

TEST_F(LexicalTest, NonUtf8BytesAreAllowedAsBytesAndQuotedInMessages) {
  const std::string name = "\xff\xfe-latin1-\xe9.txt";
  auto norm = ws_->CheckRelative(name);
  ASSERT_TRUE(norm.ok()) << norm.status();
  EXPECT_EQ(*norm, name);
  ASSERT_TRUE(ws_->WriteFileAtomic(name, "bytes").ok());
  EXPECT_EQ(GetFile(tree_.root + "/" + name), "bytes");
  auto read = ws_->ReadFile(name, 100);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "bytes");
  // The message stays valid UTF-8: invalid bytes become \xNN.
  auto denied = ws_->CheckRelative("../\xff");
  EXPECT_EQ(denied.status().message(), "parent traversal not allowed: '../\\xff'");
}

TEST_F(LexicalTest, OpenRefusesAMissingRootOrAFile) {
  EXPECT_EQ(Code(Workspace::Open(tree_.base + "/nope").status()), ErrorCode::kENOENT);
  EXPECT_EQ(Code(Workspace::Open("").status()), ErrorCode::kEINVAL);
  EXPECT_FALSE(Workspace::Open(tree_.root + "/inside.txt").ok());
}

TEST_F(LexicalTest, RootReachedThroughASymlinkIsJudgedByItsRealPath) {
  Symlink(tree_.root, tree_.base + "/alias");
  auto ws = Workspace::Open(tree_.base + "/alias");
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ(ws->root(), tree_.root);
  auto resolved = ws->Resolve("dir/nested.txt");
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(*resolved, tree_.root + "/dir/nested.txt");
}

TEST(StrategyTest, AutoPicksOpenat2WhenAvailableAndTheWalkOtherwise) {
  const Tree tree = Tree::Make();
  auto forced = OpenWith(tree.root, OpenStrategy::kOpenat2);
  auto automatic = OpenWith(tree.root, OpenStrategy::kAuto);
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  if (forced.ok()) {
    EXPECT_EQ(automatic->strategy(), OpenStrategy::kOpenat2);
  } else {
    EXPECT_EQ(Code(forced.status()), ErrorCode::kEUNSUPPORTED);
    EXPECT_EQ(automatic->strategy(), OpenStrategy::kWalk);
  }
  auto walk = OpenWith(tree.root, OpenStrategy::kWalk);
  ASSERT_TRUE(walk.ok());
  EXPECT_EQ(walk->strategy(), OpenStrategy::kWalk);
}

// ---- Behaviour that depends on how paths are opened: run once per strategy. ----

class WorkspacePolicyTest : public ::testing::TestWithParam<OpenStrategy> {
 protected:
  void SetUp() override {
    tree_ = Tree::Make();
    auto ws = OpenWith(tree_.root, GetParam());
    if (!ws.ok() && Code(ws.status()) == ErrorCode::kEUNSUPPORTED) {
      GTEST_SKIP() << "strategy unavailable here: " << ws.status();
    }
    ASSERT_TRUE(ws.ok()) << ws.status();
    ws_.emplace(std::move(*ws));
  }

  // Asserts `status` is an EPERM denial whose message contains `reason`.
  static void ExpectDenied(const absl::Status& status, absl::string_view reason) {
    EXPECT_EQ(Code(status), ErrorCode::kEPERM) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(reason)));
  }

  Tree tree_;
  std::optional<Workspace> ws_;
};

INSTANTIATE_TEST_SUITE_P(Strategies, WorkspacePolicyTest,
                         ::testing::Values(OpenStrategy::kOpenat2, OpenStrategy::kWalk),
                         [](const auto& info) { return StrategyName(info.param); });

TEST_P(WorkspacePolicyTest, ReadsThroughDotAndDoubleSlashComponents) {
  for (const char* path : {"dir/nested.txt", "./dir//nested.txt", "dir/./nested.txt"}) {
    auto read = ws_->ReadFile(path, 100);
    ASSERT_TRUE(read.ok()) << path << ": " << read.status();
    EXPECT_EQ(*read, "nested");
  }
  auto dir = ws_->OpenBeneath(".", O_RDONLY | O_DIRECTORY);
  EXPECT_TRUE(dir.ok()) << dir.status();
  auto missing = ws_->ReadFile("dir/none.txt", 100);
  EXPECT_EQ(Code(missing.status()), ErrorCode::kENOENT);
  EXPECT_EQ(missing.status().message(), "no such file: 'dir/none.txt'");
  EXPECT_EQ(Code(ws_->ReadFile("dir", 100).status()), ErrorCode::kEINVAL);
  EXPECT_EQ(Code(ws_->ReadFile("inside.txt/x", 100).status()), ErrorCode::kENOENT);
}

TEST_P(WorkspacePolicyTest, RootEvilPrefixTrapFails) {
  Symlink(tree_.evil + "/secret.txt", tree_.root + "/abs");       // "/base/root-evil/..."
  Symlink("../root-evil/secret.txt", tree_.root + "/rel");
  Symlink(tree_.evil, tree_.root + "/evildir");
  for (const char* path : {"abs", "rel", "evildir/secret.txt"}) {
    ExpectDenied(ws_->Resolve(path).status(), absl::StrCat("path escapes workspace: '", path, "'"));
    ExpectDenied(ws_->ReadFile(path, 100).status(), "symbolic link not followed");
  }
}

TEST_P(WorkspacePolicyTest, SymlinkToAFileOutsideIsRefusedEverywhere) {
  Symlink(tree_.outside + "/secret.txt", tree_.root + "/link");
  ExpectDenied(ws_->Resolve("link").status(), "path escapes workspace: 'link'");
  ExpectDenied(ws_->ReadFile("link", 100).status(), "symbolic link not followed");
  ExpectDenied(ws_->ReadRange("link", 0, 3).status(), "symbolic link not followed");
  ExpectDenied(ws_->OpenBeneath("link", O_WRONLY | O_TRUNC).status(), "symbolic link");
  ExpectDenied(ws_->OpenBeneath("link", O_WRONLY | O_CREAT).status(), "symbolic link");
  ExpectDenied(ws_->WriteFileAtomic("link", "pwned"), "symbolic link");
  EXPECT_EQ(GetFile(tree_.outside + "/secret.txt"), "SECRET");
  EXPECT_FALSE(AnyTempFile(tree_.root));
}

TEST_P(WorkspacePolicyTest, SymlinkToADirectoryOutsideIsRefusedEverywhere) {
  Symlink(tree_.outside, tree_.root + "/out");
  ExpectDenied(ws_->Resolve("out/secret.txt").status(), "path escapes workspace");
  ExpectDenied(ws_->Resolve("out/new/deeper.txt").status(), "path escapes workspace");
  ExpectDenied(ws_->ReadFile("out/secret.txt", 100).status(), "symbolic link not followed");
  ExpectDenied(ws_->OpenBeneath("out", O_RDONLY | O_DIRECTORY).status(), "symbolic link");
  ExpectDenied(ws_->WriteFileAtomic("out/new.txt", "pwned"), "symbolic link");
  ExpectDenied(ws_->WriteFileAtomic("out/sub/new.txt", "pwned"), "symbolic link");
  EXPECT_EQ(DirNames(tree_.outside), (std::set<std::string>{"f", "secret.txt"}));
}

TEST_P(WorkspacePolicyTest, SymlinkChainIsFollowedToItsEndAndJudgedThere) {
  // a -> b -> dir/c -> outside/secret.txt
  Symlink("b", tree_.root + "/a");
  Symlink("dir/c", tree_.root + "/b");
  Symlink(tree_.outside + "/secret.txt", tree_.root + "/dir/c");
  ExpectDenied(ws_->Resolve("a").status(), "path escapes workspace: 'a'");
  ExpectDenied(ws_->ReadFile("a", 100).status(), "symbolic link not followed");
  // x -> y -> inside.txt stays inside: Resolve says where it lands; opening still refuses links.
  Symlink("y", tree_.root + "/x");
  Symlink("dir/../inside.txt", tree_.root + "/y");
  auto resolved = ws_->Resolve("x");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, tree_.root + "/inside.txt");
}

TEST_P(WorkspacePolicyTest, SymlinkInsideResolvesButIsNotOpened) {
  Symlink("inside.txt", tree_.root + "/alias");
  Symlink("dir", tree_.root + "/dirlink");
  auto resolved = ws_->Resolve("alias", /*must_exist=*/true);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, tree_.root + "/inside.txt");
  EXPECT_EQ(*ws_->Resolve("dirlink/nested.txt"), tree_.root + "/dir/nested.txt");
  ExpectDenied(ws_->ReadFile("alias", 100).status(),
               "symbolic link not followed (the workspace opens no symlink): 'alias'");
  ExpectDenied(ws_->ReadFile("dirlink/nested.txt", 100).status(), "symbolic link not followed");
  // Writing through the alias would replace the link, not the file: refused, target untouched.
  ExpectDenied(ws_->WriteFileAtomic("alias", "new"), "symbolic link");
  EXPECT_EQ(GetFile(tree_.root + "/inside.txt"), "inside");
}

TEST_P(WorkspacePolicyTest, DanglingSymlinkOutsideIsJudgedByWhereItPoints) {
  Symlink(tree_.outside + "/not-yet", tree_.root + "/dangling");
  ExpectDenied(ws_->Resolve("dangling").status(), "path escapes workspace");
  ExpectDenied(ws_->Resolve("dangling/deeper").status(), "path escapes workspace");
  ExpectDenied(ws_->WriteFileAtomic("dangling", "pwned"), "symbolic link");
  ExpectDenied(ws_->OpenBeneath("dangling", O_WRONLY | O_CREAT).status(), "symbolic link");
  EXPECT_FALSE(Exists(tree_.outside + "/not-yet"));
}

TEST_P(WorkspacePolicyTest, SymlinkLoopIsRefusedNotSpun) {
  Symlink("loop-b", tree_.root + "/loop-a");
  Symlink("loop-a", tree_.root + "/loop-b");
  ExpectDenied(ws_->Resolve("loop-a").status(), "too many levels of symbolic links");
  ExpectDenied(ws_->ReadFile("loop-a", 100).status(), "symbolic link not followed");
}

TEST_P(WorkspacePolicyTest, ProcSelfMagicLinksCannotLeadOut) {
  if (!Exists("/proc/self/root")) GTEST_SKIP() << "no /proc here";
  Symlink("/proc/self/root/etc/passwd", tree_.root + "/proc-root");
  Symlink("/proc/self/cwd", tree_.root + "/proc-cwd");
  Symlink("/proc/self/root" + tree_.outside + "/secret.txt", tree_.root + "/proc-out");
  for (const char* path : {"proc-root", "proc-cwd", "proc-cwd/x", "proc-out"}) {
    ExpectDenied(ws_->Resolve(path).status(), "path escapes workspace");
    ExpectDenied(ws_->ReadFile(path, 1 << 20).status(), "symbolic link not followed");
  }
  // Through the magic link back into the root: the real path is inside, and Resolve says so
  // (it judges the real path, not the spelling); opening still follows no link.
  Symlink("/proc/self/root" + tree_.root + "/inside.txt", tree_.root + "/proc-in");
  auto resolved = ws_->Resolve("proc-in");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, tree_.root + "/inside.txt");
  ExpectDenied(ws_->ReadFile("proc-in", 100).status(), "symbolic link not followed");
}

TEST_P(WorkspacePolicyTest, ResolveMustExist) {
  auto missing = ws_->Resolve("dir/none.txt", /*must_exist=*/true);
  EXPECT_EQ(Code(missing.status()), ErrorCode::kENOENT);
  EXPECT_EQ(missing.status().message(), "no such file: 'dir/none.txt'");
  EXPECT_EQ(*ws_->Resolve("dir/none/deeper.txt"), tree_.root + "/dir/none/deeper.txt");
  EXPECT_EQ(*ws_->Resolve("."), tree_.root);
  EXPECT_EQ(*ws_->Resolve("./dir//nested.txt", true), tree_.root + "/dir/nested.txt");
}

TEST_P(WorkspacePolicyTest, PathAtTheLengthLimitWorksEndToEnd) {
  // Nested directories with 199-byte names, then a leaf that makes exactly kMaxPathBytes, which
  // openat2 takes in one call.
  const std::string component(199, 'd');
  std::string deep;
  while (kMaxPathBytes - deep.size() > kMaxNameBytes) deep += component + "/";
  deep += std::string(kMaxPathBytes - deep.size(), 'x');
  ASSERT_EQ(deep.size(), kMaxPathBytes);
  const absl::Status written = ws_->WriteFileAtomic(deep, "deep");
  ASSERT_TRUE(written.ok()) << written;
  auto read = ws_->ReadFile(deep, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "deep");
  EXPECT_EQ(Code(ws_->ReadFile(deep + "x", 10).status()), ErrorCode::kEINVAL);
}

TEST_P(WorkspacePolicyTest, ReadOverTheCapIsEfbigWithAHint) {
  PutFile(tree_.root + "/big.txt", std::string(1000, 'b'));
  auto read = ws_->ReadFile("big.txt", 999);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(Code(read.status()), ErrorCode::kEFBIG);
  EXPECT_EQ(read.status().message(), "file too large: 'big.txt' (1000 bytes > 999); read a range");
  EXPECT_EQ(Info(Code(read.status())).suggested_action, "read_range");
  auto exact = ws_->ReadFile("big.txt", 1000);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->size(), 1000u);
  EXPECT_EQ(Code(ws_->ReadFile("dir/nested.txt", 0).status()), ErrorCode::kEFBIG);
  PutFile(tree_.root + "/empty.txt", "");
  EXPECT_EQ(*ws_->ReadFile("empty.txt", 0), "");
}

TEST_P(WorkspacePolicyTest, ReadRangeReturnsTheSliceAndStopsAtEof) {
  PutFile(tree_.root + "/digits.txt", "0123456789");
  EXPECT_EQ(*ws_->ReadRange("digits.txt", 2, 3), "234");
  EXPECT_EQ(*ws_->ReadRange("digits.txt", 8, 100), "89");
  EXPECT_EQ(*ws_->ReadRange("digits.txt", 10, 5), "");
  EXPECT_EQ(*ws_->ReadRange("digits.txt", 1000, 5), "");
  EXPECT_EQ(*ws_->ReadRange("digits.txt", 0, 0), "");
  EXPECT_EQ(Code(ws_->ReadRange("digits.txt", UINT64_MAX, 1).status()), ErrorCode::kEINVAL);
  EXPECT_EQ(Code(ws_->ReadRange("dir", 0, 1).status()), ErrorCode::kEINVAL);
}

TEST_P(WorkspacePolicyTest, WriteCreatesParentsReplacesAndKeepsMode) {
  ASSERT_TRUE(ws_->WriteFileAtomic("new/deep/er/file.txt", "one").ok());
  EXPECT_EQ(GetFile(tree_.root + "/new/deep/er/file.txt"), "one");
  ASSERT_EQ(::chmod((tree_.root + "/inside.txt").c_str(), 0750), 0);
  ASSERT_TRUE(ws_->WriteFileAtomic("./inside.txt", "two").ok());
  EXPECT_EQ(GetFile(tree_.root + "/inside.txt"), "two");
  struct stat st;
  ASSERT_EQ(::stat((tree_.root + "/inside.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  ASSERT_TRUE(ws_->WriteFileAtomic("empty.txt", "").ok());
  EXPECT_EQ(GetFile(tree_.root + "/empty.txt"), "");
  EXPECT_FALSE(AnyTempFile(tree_.root));
  EXPECT_FALSE(AnyTempFile(tree_.root + "/new/deep/er"));
  EXPECT_EQ(Code(ws_->WriteFileAtomic(".", "x")), ErrorCode::kEINVAL);
}

TEST_P(WorkspacePolicyTest, FailedWriteLeavesNoTempAndTouchesNothing) {
  // The parent is a file: nothing can be created, the file is intact.
  auto status = ws_->WriteFileAtomic("inside.txt/child.txt", "x");
  EXPECT_EQ(Code(status), ErrorCode::kENOENT) << status;
  EXPECT_EQ(GetFile(tree_.root + "/inside.txt"), "inside");
  // The target is a directory: refused before a temporary file exists; the directory untouched.
  // (A failure after the temporary file exists is the RLIMIT_FSIZE test below.)
  status = ws_->WriteFileAtomic("dir", "x");
  EXPECT_EQ(Code(status), ErrorCode::kEINVAL) << status;
  EXPECT_EQ(GetFile(tree_.root + "/dir/nested.txt"), "nested");
  EXPECT_FALSE(AnyTempFile(tree_.root));
}

TEST_P(WorkspacePolicyTest, WriteThatFailsMidwayKeepsTheOldContent) {
  // RLIMIT_FSIZE makes write() fail with EFBIG after 1 KiB: a deterministic mid-write failure.
  // In a child, so the limit cannot touch the test log.
  ASSERT_TRUE(ws_->WriteFileAtomic("keep.txt", "old content").ok());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {1024, 1024};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    const absl::Status s = ws_->WriteFileAtomic("keep.txt", std::string(64 * 1024, 'n'));
    ::_exit(s.ok() ? 1 : (CodeOf(s) == ErrorCode::kEFBIG ? 0 : 2));
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0) << "1: the write succeeded; 2: wrong code; 3: setrlimit";
  EXPECT_EQ(GetFile(tree_.root + "/keep.txt"), "old content");
  EXPECT_FALSE(AnyTempFile(tree_.root));
}

TEST_P(WorkspacePolicyTest, HardLinkedFilesAreRefusedForOpenButReplacedByAtomicWrite) {
  if (::link((tree_.outside + "/secret.txt").c_str(), (tree_.root + "/hard").c_str()) != 0) {
    GTEST_SKIP() << "link(): " << std::strerror(errno);
  }
  ExpectDenied(ws_->ReadFile("hard", 100).status(), "file has 2 hard links");
  ExpectDenied(ws_->OpenBeneath("hard", O_WRONLY | O_TRUNC).status(), "hard links");
  ExpectDenied(ws_->OpenBeneath("hard", O_RDWR | O_APPEND).status(), "hard links");
  EXPECT_EQ(GetFile(tree_.outside + "/secret.txt"), "SECRET") << "O_TRUNC ran before the check";
  // The atomic write swaps the name for a new inode; the outside name keeps its content.
  ASSERT_TRUE(ws_->WriteFileAtomic("hard", "mine").ok());
  EXPECT_EQ(GetFile(tree_.root + "/hard"), "mine");
  EXPECT_EQ(GetFile(tree_.outside + "/secret.txt"), "SECRET");
  EXPECT_EQ(*ws_->ReadFile("hard", 100), "mine");
  // The option turns the refusal off, for workspaces that legitimately hold hard links.
  ASSERT_EQ(::link((tree_.outside + "/f").c_str(), (tree_.root + "/hard2").c_str()), 0);
  WorkspaceOptions options;
  options.strategy = GetParam();
  options.allow_hard_links = true;
  auto permissive = Workspace::Open(tree_.root, options);
  ASSERT_TRUE(permissive.ok());
  EXPECT_EQ(*permissive->ReadFile("hard2", 100), "SECRET-D");
}

TEST_P(WorkspacePolicyTest, FifoIsRefusedWithoutBlocking) {
  if (::mkfifo((tree_.root + "/fifo").c_str(), 0644) != 0) {
    GTEST_SKIP() << "mkfifo(): " << std::strerror(errno);
  }
  // Without O_NONBLOCK during the open this would hang forever (no writer).
  ExpectDenied(ws_->ReadFile("fifo", 100).status(), "not a regular file or directory: 'fifo'");
  ExpectDenied(ws_->WriteFileAtomic("fifo", "x"), "not a regular file or directory");
}

TEST_P(WorkspacePolicyTest, ListFilesIsSortedSkipsExcludesAndNeverFollowsLinks) {
  MakeDir(tree_.root + "/.git");
  PutFile(tree_.root + "/.git/HEAD", "ref");
  MakeDir(tree_.root + "/dir/__pycache__");
  PutFile(tree_.root + "/dir/__pycache__/m.pyc", "pyc");
  MakeDir(tree_.root + "/dir/sub");
  MakeDir(tree_.root + "/dir/sub/.git");
  PutFile(tree_.root + "/dir/sub/.git/config", "x");
  PutFile(tree_.root + "/dir/sub/b.txt", "bb");
  MakeDir(tree_.root + "/dir/wt");
  PutFile(tree_.root + "/dir/wt/.git", "gitdir: /elsewhere");  // A worktree's .git is a file.
  PutFile(tree_.root + "/dir/wt/c.txt", "ccc");
  PutFile(tree_.root + "/a.txt", "a");
  PutFile(tree_.root + "/.sbtmp.0123456789abcdef", "half-written");
  PutFile(tree_.root + "/back\\slash", "unaddressable");
  Symlink(tree_.outside, tree_.root + "/outlink");
  Symlink(tree_.outside + "/secret.txt", tree_.root + "/filelink");
  Symlink("dir", tree_.root + "/inlink");
  ASSERT_EQ(::mkfifo((tree_.root + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::link((tree_.outside + "/f").c_str(), (tree_.root + "/hard").c_str()), 0);
  auto files = ws_->ListFiles();
  ASSERT_TRUE(files.ok()) << files.status();
  const std::vector<FileEntry> want = {
      {"a.txt", 1}, {"dir/nested.txt", 6}, {"dir/sub/b.txt", 2}, {"dir/wt/c.txt", 3},
      {"inside.txt", 6}};
  EXPECT_EQ(*files, want);
  for (const FileEntry& entry : *files) {
    EXPECT_TRUE(ws_->ReadFile(entry.path, 100).ok()) << "listed but unreadable: " << entry.path;
  }
}

// The race the header promises to win: a path flips between a regular file or directory inside and
// a symlink to outside, as fast as a thread can flip it, while another thread reads and writes
// through the workspace. Not once may outside content be read or an outside file be written.
TEST_P(WorkspacePolicyTest, SwappedSymlinkRaceNeverReachesOutside) {
  const std::string& r = tree_.root;
  MakeDir(r + "/d");
  PutFile(r + "/d/f", "inside-d");
  PutFile(r + "/sw", "inside");
  std::atomic<bool> stop{false};
  std::atomic<int> flips{0};
  std::thread swapper([&] {
    int junk = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      // File <-> symlink, each an atomic rename over "sw".
      ::unlink((r + "/.l").c_str());
      ::symlink((tree_.outside + "/secret.txt").c_str(), (r + "/.l").c_str());
      ::rename((r + "/.l").c_str(), (r + "/sw").c_str());
      PutFile(r + "/.f", "inside");
      ::rename((r + "/.f").c_str(), (r + "/sw").c_str());
      // Directory <-> symlink (not atomic; the gaps are part of the attack).
      ::rename((r + "/d").c_str(), (r + "/.dsave").c_str());
      ::symlink(tree_.outside.c_str(), (r + "/d").c_str());
      ::unlink((r + "/d").c_str());
      if (::rename((r + "/.dsave").c_str(), (r + "/d").c_str()) != 0) {
        // A writer re-created "d" in the gap: move it aside, restore ours.
        ::rename((r + "/d").c_str(), (r + "/.junk" + std::to_string(junk++)).c_str());
        ::rename((r + "/.dsave").c_str(), (r + "/d").c_str());
      }
      flips.fetch_add(1, std::memory_order_relaxed);
    }
  });
  int leaks = 0, reads_ok = 0, reads_denied = 0;
  std::string leaked;
  for (int i = 0; i < 2000; ++i) {
    for (const auto& [path, want] :
         {std::pair<const char*, const char*>{"sw", "inside"}, {"d/f", "inside-d"}}) {
      auto read = ws_->ReadFile(path, 100);
      if (read.ok()) {
        ++reads_ok;
        if (*read != want) ++leaks, leaked = *read;
      } else {
        ++reads_denied;
      }
    }
    if (auto fd = ws_->OpenBeneath("sw", O_WRONLY); fd.ok()) {
      EXPECT_EQ(::pwrite(fd->get(), "inside", 6, 0), 6);
    }
    // Atomic writes fsync twice each: a few hundred are enough to meet every window.
    if (i % 10 == 0) {
      (void)ws_->WriteFileAtomic("d/f", "inside-d");
      (void)ws_->WriteFileAtomic("d/g", "written");
    }
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(leaks, 0) << "outside content read: " << leaked;
  EXPECT_EQ(GetFile(tree_.outside + "/secret.txt"), "SECRET");
  EXPECT_EQ(GetFile(tree_.outside + "/f"), "SECRET-D");
  EXPECT_EQ(DirNames(tree_.outside), (std::set<std::string>{"f", "secret.txt"}));
  RecordProperty("flips", flips.load());
  RecordProperty("reads_ok", reads_ok);
  RecordProperty("reads_denied", reads_denied);
}

// ---- Both strategies give the same answer for the same question. ----

// Populates `root` with the shapes the policy distinguishes.
void BuildZoo(const Tree& t) {
  const std::string& r = t.root;
  Symlink(t.outside + "/secret.txt", r + "/out-file");
  Symlink(t.outside, r + "/out-dir");
  Symlink("inside.txt", r + "/in-file");
  Symlink("dir", r + "/in-dir");
  Symlink("../root-evil/secret.txt", r + "/evil");
  Symlink(t.outside + "/missing", r + "/dangling");
  Symlink("loop2", r + "/loop1");
  Symlink("loop1", r + "/loop2");
  ASSERT_EQ(::mkfifo((r + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::link((t.outside + "/f").c_str(), (r + "/hard").c_str()), 0);
}

TEST(StrategyAgreementTest, WalkAndOpenat2AgreeOnEveryCase) {
  const Tree walk_tree = Tree::Make();
  const Tree o2_tree = Tree::Make();
  BuildZoo(walk_tree);
  BuildZoo(o2_tree);
  auto o2 = OpenWith(o2_tree.root, OpenStrategy::kOpenat2);
  if (!o2.ok()) GTEST_SKIP() << "openat2 unavailable: " << o2.status();
  auto walk = OpenWith(walk_tree.root, OpenStrategy::kWalk);
  ASSERT_TRUE(walk.ok());
  const std::vector<std::string> paths = {
      "inside.txt", "./inside.txt", "dir", "dir/nested.txt", "dir//nested.txt", "missing.txt",
      "dir/missing/x", "inside.txt/x", "out-file", "out-dir", "out-dir/secret.txt", "in-file",
      "in-dir", "in-dir/nested.txt", "evil", "dangling", "loop1", "fifo", "hard", ".", "../x",
      "/etc/passwd", "a\\b", ""};
  // Outcome of one call: the code (or OK) and what was read.
  using Outcome = std::tuple<std::string, std::string>;
  const auto outcome = [](const absl::StatusOr<std::string>& r) {
    return r.ok() ? Outcome{"OK", *r} : Outcome{std::string(Info(CodeOf(r.status())).name), ""};
  };
  const auto status_name = [](const absl::Status& s) {
    return s.ok() ? std::string("OK") : std::string(Info(CodeOf(s)).name);
  };
  for (const std::string& p : paths) {
    EXPECT_EQ(outcome(walk->ReadFile(p, 100)), outcome(o2->ReadFile(p, 100))) << "read " << p;
    EXPECT_EQ(status_name(walk->OpenBeneath(p, O_RDONLY | O_DIRECTORY).status()),
              status_name(o2->OpenBeneath(p, O_RDONLY | O_DIRECTORY).status()))
        << "opendir " << p;
    EXPECT_EQ(status_name(walk->OpenBeneath(p, O_WRONLY | O_CREAT, 0644).status()),
              status_name(o2->OpenBeneath(p, O_WRONLY | O_CREAT, 0644).status()))
        << "create " << p;
    const std::string target = p + "/w.txt";
    EXPECT_EQ(status_name(walk->WriteFileAtomic(target, "w")),
              status_name(o2->WriteFileAtomic(target, "w")))
        << "write " << target;
  }
  EXPECT_EQ(*walk->ListFiles(), *o2->ListFiles());
  EXPECT_EQ(DirNames(walk_tree.outside), (std::set<std::string>{"f", "secret.txt"}));
  EXPECT_EQ(DirNames(o2_tree.outside), (std::set<std::string>{"f", "secret.txt"}));
}

}  // namespace
}  // namespace sandbox
