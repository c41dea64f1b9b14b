// Where the runner's own cgroup is, v2 first then v1, against fake cgroup trees: this machine has
// only v1 controllers, so the v2 path, the hybrid layout and each refusal are tested here on files
// that look like cgroupfs, with the cgroup2 check answered by the test.
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/linux/cgroup_internal.h"

namespace sandbox::linux_layers::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

TEST(ParseProcCgroupTest, MapsEachControllerAndTheUnifiedLine) {
  EXPECT_THAT(ParseProcCgroup("12:pids:/user.slice/x\n"
                              "11:memory:/user.slice\n"
                              "4:cpu,cpuacct:/a\n"
                              "1:name=systemd:/init.scope\n"
                              "0::/init.scope\n"),
              ElementsAre(Pair("", "/init.scope"), Pair("cpu", "/a"), Pair("cpuacct", "/a"),
                          Pair("memory", "/user.slice"), Pair("name=systemd", "/init.scope"),
                          Pair("pids", "/user.slice/x")));
}

TEST(ParseProcCgroupTest, KeepsColonsInThePathAndSkipsMalformedLines) {
  EXPECT_THAT(ParseProcCgroup("0::/a:b:c"), ElementsAre(Pair("", "/a:b:c")));
  EXPECT_THAT(ParseProcCgroup("garbage\n3:memory\n\n2:pids:/p\n"), ElementsAre(Pair("pids", "/p")));
  EXPECT_THAT(ParseProcCgroup(""), IsEmpty());
}

class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/cgroupfs.XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    host_.root = templ + "/sys/fs/cgroup";
    host_.proc_self_cgroup = templ + "/proc_self_cgroup";
    MakeDirs(host_.root);
    host_.is_cgroup2 = [this](const std::string& path) { return path == v2_mount_; };
  }

  static void MakeDirs(const std::string& path) {
    for (size_t i = 1; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
    }
  }

  // Writes `text` to root-relative `rel`, making its directories.
  void Put(const std::string& rel, const std::string& text) {
    const std::string path = host_.root + "/" + rel;
    MakeDirs(path.substr(0, path.rfind('/')));
    std::ofstream(path) << text;
  }

  void ProcSelfCgroup(const std::string& text) { std::ofstream(host_.proc_self_cgroup) << text; }

  std::string Root(const std::string& rel = "") const {
    return rel.empty() ? host_.root : absl::StrCat(host_.root, "/", rel);
  }

  CgroupHost host_;
  std::string v2_mount_;  // The one path the fake calls a cgroup2 mount; none when empty.
};

TEST_F(FakeTree, V2WithMemoryAndPidsDelegatedIsChosen) {
  v2_mount_ = Root();
  ProcSelfCgroup("0::/user.slice/me\n");
  Put("user.slice/me/cgroup.controllers", "cpuset cpu io memory pids\n");
  Put("user.slice/me/cgroup.subtree_control", "memory pids\n");
  V2Location v2 = FindV2(host_);
  EXPECT_EQ(v2.dir, Root("user.slice/me"));
  EXPECT_THAT(v2.why_not, IsEmpty());
  CgroupProbe probe = ProbeCgroups(host_);
  EXPECT_EQ(probe.mode, CgroupMode::kV2);
  EXPECT_EQ(probe.detail, "v2 at " + Root("user.slice/me"));
}

TEST_F(FakeTree, V2AtTheRootCgroupHasNoTrailingSlash) {
  v2_mount_ = Root();
  ProcSelfCgroup("0::/\n");
  Put("cgroup.controllers", "memory pids\n");
  Put("cgroup.subtree_control", "pids memory");
  EXPECT_EQ(FindV2(host_).dir, Root());
}

TEST_F(FakeTree, HybridLayoutFindsV2UnderUnified) {
  v2_mount_ = Root("unified");
  ProcSelfCgroup("4:memory:/\n0::/svc\n");
  Put("unified/svc/cgroup.controllers", "memory pids");
  Put("unified/svc/cgroup.subtree_control", "memory pids");
  EXPECT_EQ(FindV2(host_).dir, Root("unified/svc"));
}

TEST_F(FakeTree, V2WithoutAControllerOrItsDelegationSaysWhich) {
  v2_mount_ = Root();
  ProcSelfCgroup("0::/me\n");
  Put("me/cgroup.controllers", "cpu pids\n");
  Put("me/cgroup.subtree_control", "pids\n");
  V2Location v2 = FindV2(host_);
  EXPECT_THAT(v2.dir, IsEmpty());
  EXPECT_THAT(v2.why_not, HasSubstr("lacks the memory controller"));

  Put("me/cgroup.controllers", "memory pids\n");
  Put("me/cgroup.subtree_control", "memory\n");
  v2 = FindV2(host_);
  EXPECT_THAT(v2.dir, IsEmpty());
  EXPECT_THAT(v2.why_not, HasSubstr("pids not enabled in " + Root("me") + "/cgroup.subtree_control"));
}

TEST_F(FakeTree, NoCgroup2MountIsSaid) {
  ProcSelfCgroup("0::/\n");
  EXPECT_EQ(FindV2(host_).why_not, "no cgroup2 mount");
}

class V1Tree : public FakeTree {
 protected:
  void Mount(const std::string& controller, const std::string& own) {
    Put(controller + "/cgroup.procs", "");
    MakeDirs(Root(controller) + own);
  }
};

TEST_F(V1Tree, V1IsTheFallbackWithEachControllersOwnCgroup) {
  ProcSelfCgroup("5:pids:/p\n4:memory:/m/\n3:cpu,cpuacct:/\n0::/\n");
  Mount("memory", "/m");
  Mount("pids", "/p");
  Mount("cpu", "/");
  V1Location v1 = FindV1(host_);
  EXPECT_THAT(v1.why_not, IsEmpty());
  EXPECT_THAT(v1.dirs, ElementsAre(Pair("cpu", Root("cpu")), Pair("memory", Root("memory/m")),
                                   Pair("pids", Root("pids/p"))));
  CgroupProbe probe = ProbeCgroups(host_);
  EXPECT_EQ(probe.mode, CgroupMode::kV1);
  EXPECT_EQ(probe.detail, absl::StrCat("v1 (no cgroup2 mount): cpu=", Root("cpu"),
                                       ", memory=", Root("memory/m"), ", pids=", Root("pids/p")));
}

TEST_F(V1Tree, CpuIsOptionalMemoryAndPidsAreNot) {
  ProcSelfCgroup("5:pids:/\n4:memory:/\n");
  Mount("memory", "/");
  Mount("pids", "/");
  V1Location v1 = FindV1(host_);
  EXPECT_THAT(v1.why_not, IsEmpty());
  EXPECT_THAT(v1.dirs, ElementsAre(Pair("memory", Root("memory")), Pair("pids", Root("pids"))));

  ProcSelfCgroup("4:memory:/\n3:cpu:/\n");  // pids is mounted but we are not in it.
  Mount("cpu", "/");
  EXPECT_EQ(FindV1(host_).why_not, "no v1 pids controller mounted at " + Root("pids"));
}

TEST_F(V1Tree, AControllerMountedAsCgroup2IsNotV1) {
  ProcSelfCgroup("5:pids:/\n4:memory:/\n");
  Mount("memory", "/");
  Mount("pids", "/");
  v2_mount_ = Root("memory");
  EXPECT_EQ(FindV1(host_).why_not, "no v1 memory controller mounted at " + Root("memory"));
}

TEST_F(V1Tree, AMissingOwnCgroupIsNotWritable) {
  ProcSelfCgroup("5:pids:/\n4:memory:/gone\n");
  Mount("memory", "/");
  Mount("pids", "/");
  EXPECT_THAT(FindV1(host_).why_not, HasSubstr("v1: " + Root("memory/gone") + " is not writable"));
}

TEST_F(FakeTree, NeitherGivesNoneWithBothReasons) {
  ProcSelfCgroup("0::/\n");
  CgroupProbe probe = ProbeCgroups(host_);
  EXPECT_EQ(probe.mode, CgroupMode::kNone);
  EXPECT_EQ(probe.detail, "no cgroup2 mount; no v1 memory controller mounted at " + Root("memory"));
}

}  // namespace
}  // namespace sandbox::linux_layers::internal
