// RemoveTree, which removes the fresh demo directory: everything beneath goes, nothing a symlink
// points at does, and a path that is not a directory is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/demo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace agent {
namespace {

using ::testing::HasSubstr;

std::string Fresh(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void Touch(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, "x", 1), 1);
  ::close(fd);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(RemoveTreeTest, RemovesNestedDirectoriesAndFiles) {
  std::string dir = Fresh("tree1");
  ASSERT_EQ(::mkdir((dir + "/workspace").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/workspace/.agent").c_str(), 0755), 0);
  Touch(dir + "/secret.txt");
  Touch(dir + "/workspace/calc.sh");
  Touch(dir + "/workspace/.agent/state");
  ASSERT_EQ(::chmod((dir + "/workspace/calc.sh").c_str(), 0), 0) << "a mode-0 file still goes";
  absl::Status s = RemoveTree(dir);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_FALSE(Exists(dir));
}

// Incident shape: the agent's test run leaves a link to a directory outside; cleaning up the demo
// must remove the link, not what it points at.
TEST(RemoveTreeTest, UnlinksSymlinksWithoutFollowingThem) {
  std::string outside = Fresh("outside");
  Touch(outside + "/precious.txt");
  std::string dir = Fresh("tree2");
  ASSERT_EQ(::symlink(outside.c_str(), (dir + "/to-outside").c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/precious.txt").c_str(), (dir + "/to-file").c_str()), 0);
  absl::Status s = RemoveTree(dir);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_FALSE(Exists(dir));
  EXPECT_TRUE(Exists(outside + "/precious.txt"));
}

TEST(RemoveTreeTest, RefusesWhatIsNotADirectory) {
  std::string dir = Fresh("tree3");
  Touch(dir + "/file");
  absl::Status s = RemoveTree(dir + "/file");
  EXPECT_EQ(sandbox::CodeOf(s), sandbox::ErrorCode::kEINVAL);
  EXPECT_THAT(s.message(), HasSubstr("not a directory"));
  EXPECT_TRUE(Exists(dir + "/file"));
  ASSERT_EQ(::symlink(dir.c_str(), (dir + "/link").c_str()), 0);
  EXPECT_EQ(sandbox::CodeOf(RemoveTree(dir + "/link")), sandbox::ErrorCode::kEINVAL)
      << "a symlink to a directory is not one";
  EXPECT_TRUE(Exists(dir + "/file"));
  EXPECT_FALSE(RemoveTree(dir + "/missing").ok());
}

}  // namespace
}  // namespace agent
