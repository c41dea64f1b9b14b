// Proofs with a real cgroup (v2 where delegated, else v1): a fork bomb stops at pids.max, a memory hog
// is killed by the memory limit and the stats say so, and KillAll ends a daemon that left the
// process group. Each fails if the child does not join the cgroup. And a name a killed runner left
// behind does not stop the next runner that gets its pid.
#include "sandbox/linux/cgroup.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
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

}  // namespace
}  // namespace sandbox::linux_layers
