// The open-beneath primitives on their own, below Workspace's policy: what each returns for a
// symlink, a file where a directory is needed and a missing component, and how ExplainOpenError
// turns every platform's errno for "a symlink was in the way" into ELOOP and leaves others alone.
#include "sandbox/open_beneath.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace sandbox::internal {
namespace {

class OpenBeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/open_beneath.XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    root_ = templ;
    ASSERT_EQ(mkdir((root_ + "/d").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/d/e").c_str(), 0755), 0);
    Write("d/file");
    Write("d/e/file");
    ASSERT_EQ(symlink("/etc", (root_ + "/link").c_str()), 0);
    ASSERT_EQ(symlink("e", (root_ + "/d/link").c_str()), 0);
    ASSERT_EQ(symlink("/etc/hostname", (root_ + "/d/e/link").c_str()), 0);
    fd_.reset(open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }

  void Write(const std::string& rel) {
    FILE* f = fopen((root_ + "/" + rel).c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("x", f);
    fclose(f);
  }

  bool IsDir(const std::string& rel) {
    struct stat st;
    return lstat((root_ + "/" + rel).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  std::string root_;
  UniqueFd fd_;
};

TEST_F(OpenBeneathTest, ExplainNamesASymlinkAtAnyDepthWhateverTheErrno) {
  for (const int err : {ELOOP, EMLINK, ENOTDIR}) {
    EXPECT_EQ(ExplainOpenError(fd_.get(), "link", err), ELOOP) << err;
    EXPECT_EQ(ExplainOpenError(fd_.get(), "link/passwd", err), ELOOP) << err;
    EXPECT_EQ(ExplainOpenError(fd_.get(), "d/link", err), ELOOP) << err;
    EXPECT_EQ(ExplainOpenError(fd_.get(), "d/link/file", err), ELOOP) << err;
    EXPECT_EQ(ExplainOpenError(fd_.get(), "d/e/link", err), ELOOP) << err;
  }
}

TEST_F(OpenBeneathTest, ExplainKeepsTheErrnoWhenNoSymlinkIsInTheWay) {
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/file/x", ENOTDIR), ENOTDIR);
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/e/file", ENOTDIR), ENOTDIR);
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/missing/link", ENOTDIR), ENOTDIR);
  EXPECT_EQ(ExplainOpenError(fd_.get(), ".", ENOTDIR), ENOTDIR);
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/e", EMLINK), EMLINK);
}

TEST_F(OpenBeneathTest, ExplainLeavesUnrelatedErrorsAloneEvenOnASymlink) {
  EXPECT_EQ(ExplainOpenError(fd_.get(), "link", EACCES), EACCES);
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/link", ENOENT), ENOENT);
  EXPECT_EQ(ExplainOpenError(fd_.get(), "d/e/link", EXDEV), EXDEV);
}

TEST_F(OpenBeneathTest, WalkOpensPlainPathsAndRefusesEverySymlink) {
  RawOpen ok = WalkBeneath(fd_.get(), "d/e/file", O_RDONLY, 0);
  EXPECT_EQ(ok.err, 0);
  EXPECT_TRUE(ok.fd.valid());
  EXPECT_EQ(WalkBeneath(fd_.get(), "d/e/link", O_RDONLY, 0).err, ELOOP);
  const int through_dir_link = WalkBeneath(fd_.get(), "d/link/file", O_RDONLY, 0).err;
  EXPECT_TRUE(through_dir_link == ELOOP || through_dir_link == ENOTDIR) << through_dir_link;
  EXPECT_EQ(WalkBeneath(fd_.get(), "d/file/x", O_RDONLY, 0).err, ENOTDIR);
  EXPECT_EQ(WalkBeneath(fd_.get(), "d/missing", O_RDONLY, 0).err, ENOENT);
  RawOpen created = WalkBeneath(fd_.get(), "d/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
  EXPECT_EQ(created.err, 0);
  EXPECT_TRUE(created.fd.valid());
}

TEST_F(OpenBeneathTest, MakeDirsCreatesEachMissingComponent) {
  RawOpen made = MakeDirsBeneath(fd_.get(), "a/b/c");
  ASSERT_EQ(made.err, 0);
  EXPECT_TRUE(made.fd.valid());
  EXPECT_TRUE(IsDir("a/b/c"));
  // Again, over what now exists, and through a directory that was there before.
  EXPECT_EQ(MakeDirsBeneath(fd_.get(), "a/b/c").err, 0);
  EXPECT_EQ(MakeDirsBeneath(fd_.get(), "d/e/f").err, 0);
  EXPECT_TRUE(IsDir("d/e/f"));
}

TEST_F(OpenBeneathTest, MakeDirsOfTheRootItselfOpensIt) {
  RawOpen made = MakeDirsBeneath(fd_.get(), ".");
  ASSERT_EQ(made.err, 0);
  ASSERT_TRUE(made.fd.valid());
  struct stat a, b;
  ASSERT_EQ(fstat(made.fd.get(), &a), 0);
  ASSERT_EQ(fstat(fd_.get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_NE(made.fd.get(), fd_.get());
}

TEST_F(OpenBeneathTest, MakeDirsNeverCreatesThroughASymlinkOrAFile) {
  EXPECT_NE(MakeDirsBeneath(fd_.get(), "link/made").err, 0);
  EXPECT_NE(MakeDirsBeneath(fd_.get(), "d/link/made").err, 0);
  EXPECT_FALSE(IsDir("d/e/made"));
  EXPECT_EQ(MakeDirsBeneath(fd_.get(), "d/file/made").err, ENOTDIR);
  EXPECT_NE(MakeDirsBeneath(fd_.get(), "d/e/link").err, 0);
}

TEST_F(OpenBeneathTest, Openat2RefusesToLeaveTheRootWhereAvailable) {
  if (!Openat2Available()) {
    EXPECT_EQ(Openat2Beneath(fd_.get(), "d/file", O_RDONLY, 0).err, ENOSYS);
    GTEST_SKIP() << "openat2 is not available in this build or kernel; the walk is used instead";
  }
  RawOpen ok = Openat2Beneath(fd_.get(), "d/e/file", O_RDONLY, 0);
  EXPECT_EQ(ok.err, 0);
  EXPECT_TRUE(ok.fd.valid());
  EXPECT_EQ(Openat2Beneath(fd_.get(), "../etc/passwd", O_RDONLY, 0).err, EXDEV);
  EXPECT_EQ(Openat2Beneath(fd_.get(), "d/e/link", O_RDONLY, 0).err, ELOOP);
  EXPECT_EQ(Openat2Beneath(fd_.get(), "link/passwd", O_RDONLY, 0).err, ELOOP);
}

}  // namespace
}  // namespace sandbox::internal
