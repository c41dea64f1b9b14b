// Proofs with a real cgroup (v2 where delegated, else v1): a fork bomb stops at pids.max, a memory hog
// is killed by the memory limit and the stats say so, and KillAll ends a daemon that left the
// process group. Each fails if the child does not join the cgroup. A name a killed runner left
// behind does not stop the next runner that gets its pid. And the v2 path runs for real on this
// machine's v2 hierarchy, which has no controllers but takes a cgroup without limits.
#include "sandbox/linux/cgroup.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/linux/cgroup_internal.h"
#include "sandbox/linux/forked_child.h"

namespace sandbox::linux_layers {
namespace {

// When Destroy is broken, the test still leaves the machine clean: kills what is left in `dir` (our
// own fork bomb's children) and removes it.
void RemoveLeftover(const std::string& dir) {
  for (int round = 0; round < 100; ++round) {
    std::ifstream procs(dir + "/cgroup.procs");
    pid_t pid;
    bool any = false;
    while (procs >> pid) {
      any = true;
      kill(pid, SIGKILL);
    }
    if (!any && rmdir(dir.c_str()) == 0) return;
    usleep(10000);
  }
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CgroupProbe probe = ProbeCgroups();
    if (probe.mode == CgroupMode::kNone) GTEST_SKIP() << "no usable cgroup: " << probe.detail;
  }

  std::unique_ptr<Cgroup> Make(const CgroupLimits& limits) {
    absl::StatusOr<std::unique_ptr<Cgroup>> cg = Cgroup::Create(limits);
    EXPECT_TRUE(cg.ok()) << cg.status();
    return cg.ok() ? std::move(*cg) : nullptr;
  }

  // Forks; the child joins `cg` and runs `body`.
  ChildOutcome RunJoined(const Cgroup& cg, const std::function<int()>& body) {
    absl::StatusOr<ChildOutcome> out = RunInForkedChild([&] {
      LayerStep join = cg.JoinStep();
      if (join.fn(join.arg) != 0) return 250;
      return body();
    });
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : ChildOutcome{};
  }
};

TEST_F(CgroupTest, ForkBombStopsAtPidsMax) {
  std::unique_ptr<Cgroup> cg = Make({.pids = 16});
  ASSERT_NE(cg, nullptr);
  ChildOutcome out = RunJoined(*cg, [] {
    int forked = 0;
    for (; forked < 64; ++forked) {
      pid_t pid = fork();
      if (pid == 0) {
        pause();
        _exit(0);
      }
      if (pid < 0) break;
    }
    return forked;
  });
  ASSERT_TRUE(out.exit_code.has_value()) << out.ToString();
  EXPECT_LT(*out.exit_code, 16) << "forks went past pids.max";
  EXPECT_GE(cg->Stats().pids_max_hits, 1u);
  std::vector<std::string> dirs = cg->dirs();
  EXPECT_TRUE(cg->Destroy().ok());
  for (const std::string& dir : dirs) {
    if (access(dir.c_str(), F_OK) != 0) continue;
    ADD_FAILURE() << dir << " left behind";
    RemoveLeftover(dir);
  }
}

TEST_F(CgroupTest, MemoryHogIsKilledAndTheStatsSaySo) {
  std::unique_ptr<Cgroup> cg = Make({.memory_bytes = 32 << 20});
  ASSERT_NE(cg, nullptr);
  ChildOutcome out = RunJoined(*cg, [] {
    for (int i = 0; i < 512; ++i) {
      void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return 3;
      std::memset(p, 1, 1 << 20);
    }
    return 0;
  });
  ASSERT_TRUE(out.term_signal.has_value()) << "the hog survived: " << out.ToString();
  EXPECT_EQ(*out.term_signal, SIGKILL);
  EXPECT_GE(cg->Stats().oom_kills, 1u);
}

// Where swap is accounted (v1 memory.memsw.*, v2 memory.swap.max), the hog cannot swap its way
// past the memory limit.
TEST_F(CgroupTest, TheMemoryLimitAlsoBoundsSwap) {
  std::unique_ptr<Cgroup> cg = Make({.memory_bytes = 32 << 20});
  ASSERT_NE(cg, nullptr);
  bool checked = false;
  for (const std::string& dir : cg->dirs()) {
    std::ifstream memsw(dir + "/memory.memsw.limit_in_bytes"), swap(dir + "/memory.swap.max");
    std::string value;
    if (memsw >> value) {
      EXPECT_EQ(value, std::to_string(32 << 20)) << dir;
      checked = true;
    } else if (swap >> value) {
      EXPECT_EQ(value, "0") << dir;
      checked = true;
    }
  }
  if (!checked) {
    GTEST_SKIP() << "needs swap accounting (CONFIG_MEMCG_SWAP; no memory.memsw.limit_in_bytes or "
                    "memory.swap.max here)";
  }
}

// Each Create opens files and each Destroy must close them: a runner makes one cgroup per run.
TEST_F(CgroupTest, CreateAndDestroyLeaveNoDescriptorOpenAndDestroyTwiceIsFine) {
  auto open_fds = [] {
    int n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
      while (readdir(d) != nullptr) ++n;
      closedir(d);
    }
    return n;
  };
  const int before = open_fds();
  for (int i = 0; i < 3; ++i) {
    std::unique_ptr<Cgroup> cg = Make({.memory_bytes = 64 << 20, .pids = 32, .cpu_millis = 500});
    ASSERT_NE(cg, nullptr);
    absl::Status first = cg->Destroy();
    EXPECT_TRUE(first.ok()) << first;
    EXPECT_EQ(open_fds(), before) << "Create or Destroy left a descriptor open";
    absl::Status again = cg->Destroy();
    EXPECT_TRUE(again.ok()) << "a second Destroy: " << again;
    for (const std::string& dir : cg->dirs()) EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir;
  }
}

TEST_F(CgroupTest, KillAllEndsADaemonThatLeftTheGroup) {
  std::unique_ptr<Cgroup> cg = Make({.pids = 16});
  ASSERT_NE(cg, nullptr);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ChildOutcome out = RunJoined(*cg, [&] {
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        pause();
        _exit(0);
      }
      _exit(0);
    }
    return 0;
  });
  close(fds[1]);
  EXPECT_TRUE(out.Exited(0));
  ASSERT_TRUE(cg->KillAll().ok());
  char c;
  EXPECT_EQ(read(fds[0], &c, 1), 0) << "the daemon still holds the pipe";
  close(fds[0]);
}

TEST_F(CgroupTest, CpuLimitIsWritten) {
  std::unique_ptr<Cgroup> cg = Make({.cpu_millis = 500});
  ASSERT_NE(cg, nullptr);
  for (const std::string& dir : cg->dirs()) {
    std::ifstream quota(dir + "/cpu.cfs_quota_us"), max(dir + "/cpu.max");
    std::string value;
    if (quota >> value) {
      EXPECT_EQ(value, "50000");
    } else if (max >> value) {
      EXPECT_EQ(value, "50000");
    }
  }
}

// Incident shape: a runner SIGKILLed mid-run leaves sandbox-<pid>-<n> behind, and the next process
// that gets its pid (in a pid namespace every runner is pid 1) failed every run at mkdir's EEXIST.
// Here the name the next Create would take is left in the last hierarchy only, so the directories
// made under it in the others must be undone too.
TEST_F(CgroupTest, ANameLeftByAKilledRunnerIsSkipped) {
  std::unique_ptr<Cgroup> first = Make({});
  ASSERT_NE(first, nullptr);
  auto parent = [](const std::string& dir) { return dir.substr(0, dir.rfind('/')); };
  auto base = [](const std::string& dir) { return dir.substr(dir.rfind('/') + 1); };
  std::string name = base(first->dirs()[0]);  // sandbox-<pid>-<n>
  uint64_t n = 0;
  ASSERT_TRUE(absl::SimpleAtoi(name.substr(name.rfind('-') + 1), &n)) << name;
  std::string next = absl::StrCat(name.substr(0, name.rfind('-') + 1), n + 1);
  std::string stale = absl::StrCat(parent(first->dirs().back()), "/", next);
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  absl::Cleanup remove_stale = [&] { rmdir(stale.c_str()); };

  std::unique_ptr<Cgroup> second = Make({});
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->dirs().size(), first->dirs().size());
  for (const std::string& dir : second->dirs()) {
    EXPECT_NE(base(dir), next) << "took the name a killed runner left";
    EXPECT_EQ(base(dir), base(second->dirs()[0])) << "one name in every hierarchy";
  }
  for (const std::string& dir : first->dirs()) {
    std::string undone = absl::StrCat(parent(dir), "/", next);
    if (undone == stale) continue;
    EXPECT_NE(access(undone.c_str(), F_OK), 0) << undone << " was made for the taken name and left";
  }
}

// The v2 path. Create takes it on every machine whose v2 hierarchy has memory and pids delegated;
// this one binds them to v1, but its v2 hierarchy still takes a cgroup without limits, so the path
// from mkdir to rmdir runs here for real: our own v2 cgroup, writable, or the test says why not.
// The cgroup's directory; *mount gets the v2 mount it is under.
std::string WritableOwnV2Cgroup(std::string* why, std::string* mount = nullptr) {
  internal::CgroupHost host;
  std::string root = host.IsCgroup2(host.root) ? host.root : host.root + "/unified";
  if (mount != nullptr) *mount = root;
  if (!host.IsCgroup2(root)) {
    *why = "no cgroup2 mount at " + host.root + " or " + root;
    return "";
  }
  std::ifstream in(host.proc_self_cgroup);
  std::stringstream text;
  text << in.rdbuf();
  std::string dir = root + internal::ParseProcCgroup(text.str())[""];
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  if (access(dir.c_str(), W_OK) != 0) {
    *why = dir + " is not writable: " + std::strerror(errno);
    return "";
  }
  return dir;
}

std::vector<std::string> OurCgroupsIn(const std::string& parent) {
  std::vector<std::string> out;
  std::string prefix = absl::StrCat("sandbox-", getpid(), "-");
  if (DIR* d = opendir(parent.c_str())) {
    while (struct dirent* e = readdir(d)) {
      if (absl::StartsWith(e->d_name, prefix)) out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

TEST(CgroupV2Test, CreateJoinKillAndDestroy) {
  std::string why, mount;
  std::string parent = WritableOwnV2Cgroup(&why, &mount);
  if (parent.empty()) GTEST_SKIP() << "needs a writable cgroup v2 hierarchy (cgroup2 mount): " << why;
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = internal::CreateV2At(parent, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_EQ((*cg)->mode(), CgroupMode::kV2);
  EXPECT_EQ((*cg)->Describe(), "cgroup(v2:memory,pids,cpu)");
  ASSERT_EQ((*cg)->dirs().size(), 1u);
  const std::string dir = (*cg)->dirs()[0];
  EXPECT_TRUE(absl::StartsWith(dir, parent + "/sandbox-")) << dir;

  // A child joins through the step the runner runs, then waits to be killed.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    LayerStep join = (*cg)->JoinStep();
    char ok = join.fn(join.arg) == 0 ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(2);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  EXPECT_EQ(ok, 'y') << "the child could not write cgroup.procs";
  std::ifstream member(absl::StrCat("/proc/", pid, "/cgroup"));
  std::stringstream lines;
  lines << member.rdbuf();
  // Its v2 line names the new cgroup, relative to the mount.
  EXPECT_THAT(lines.str(), ::testing::HasSubstr(absl::StrCat("0::", dir.substr(mount.size()), "\n")));

  absl::Status killed = (*cg)->KillAll();
  EXPECT_TRUE(killed.ok()) << killed;
  int status = 0;
  pid_t waited = 0;
  for (int i = 0; i < 500 && waited == 0; ++i) {
    waited = waitpid(pid, &status, WNOHANG);
    if (waited == 0) usleep(10000);
  }
  if (waited == 0) {  // Not a member after all: end it here, not at the test's timeout.
    kill(pid, SIGKILL);
    waited = waitpid(pid, &status, 0);
    ADD_FAILURE() << "KillAll left the member running";
  }
  ASSERT_EQ(waited, pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  absl::Status destroyed = (*cg)->Destroy();
  EXPECT_TRUE(destroyed.ok()) << destroyed;
  EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir << " is left";
}

// Where the hierarchy does not hold a limit (no pids controller), Create fails naming the file,
// and leaves no directory behind.
TEST(CgroupV2Test, ALimitTheHierarchyCannotHoldFailsAndLeavesNothing) {
  std::string why;
  std::string parent = WritableOwnV2Cgroup(&why);
  if (parent.empty()) GTEST_SKIP() << "needs a writable cgroup v2 hierarchy (cgroup2 mount): " << why;
  std::ifstream controllers(parent + "/cgroup.subtree_control");
  std::string enabled((std::istreambuf_iterator<char>(controllers)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = internal::CreateV2At(parent, {.pids = 16});
  if (absl::StrContains(enabled, "pids")) {  // Delegated here: the limit holds and is written.
    ASSERT_TRUE(cg.ok()) << cg.status();
    std::ifstream max((*cg)->dirs()[0] + "/pids.max");
    std::string value;
    EXPECT_TRUE(max >> value);
    EXPECT_EQ(value, "16");
    return;
  }
  ASSERT_FALSE(cg.ok());
  EXPECT_THAT(cg.status().message(), ::testing::HasSubstr("/pids.max"));
  EXPECT_THAT(OurCgroupsIn(parent), ::testing::IsEmpty());
}

}  // namespace
}  // namespace sandbox::linux_layers
