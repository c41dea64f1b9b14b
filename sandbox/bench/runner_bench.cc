// Benchmarks of the runner, each against a baseline measured in the same run:
//   spawn: /bin/true through sandbox::Run vs a bare posix_spawn+waitpid (target: ratio <= 1.2);
//   bomb:  a child writing 200 MB through the runner with a 1 MiB cap: the runner's peak RSS growth
//          (target < 16 MiB) and the throughput.
// Usage: runner_bench [--iterations=N] [--bomb-bytes=N]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "sandbox/runner.h"

extern char** environ;

namespace {

constexpr char kTrue[] = "/bin/true";

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Microseconds for one bare posix_spawn + waitpid of /bin/true, with the same minimal environment the
// runner gives its children.
double SpawnBare() {
  static char path_env[] = "PATH=/usr/local/bin:/usr/bin:/bin";
  static char lang_env[] = "LANG=C.UTF-8";
  char* envp[] = {path_env, lang_env, nullptr};
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  const absl::Time start = absl::Now();
  pid_t pid;
  if (posix_spawn(&pid, kTrue, nullptr, nullptr, argv, envp) != 0) {
    std::perror("posix_spawn");
    std::exit(1);
  }
  int status;
  while (waitpid(pid, &status, 0) == -1) {
  }
  return absl::ToDoubleMicroseconds(absl::Now() - start);
}

double SpawnRunner(const sandbox::RunRequest& request, const sandbox::PlanExtension& extend = {}) {
  const absl::Time start = absl::Now();
  absl::StatusOr<sandbox::RunResult> result = sandbox::Run(request, extend);
  const double us = absl::ToDoubleMicroseconds(absl::Now() - start);
  if (!result.ok() || result->exit_code != 0) {
    std::fprintf(stderr, "Run(/bin/true) failed: %s\n", result.status().ToString().c_str());
    std::exit(1);
  }
  return us;
}

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"), or -1 where there is no /proc.
long StatusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = absl::StrCat(field, ":");
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) {
      long kb = -1;
      std::sscanf(line.c_str() + prefix.size(), "%ld", &kb);
      return kb;
    }
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0), so the next reading is this benchmark's own peak.
bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

long SelfMaxRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
#if defined(__APPLE__)
  return usage.ru_maxrss / 1024;
#else
  return usage.ru_maxrss;
#endif
}

// CPU time (user + system) of this process and its reaped children, in microseconds. Unlike wall
// time it does not include waiting for a CPU, so it isolates the work each variant does when the
// machine is shared.
double CpuMicros() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage usage;
    getrusage(who, &usage);
    total += absl::ToDoubleMicroseconds(absl::DurationFromTimeval(usage.ru_utime) +
                                        absl::DurationFromTimeval(usage.ru_stime));
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 300;
  uint64_t bomb_bytes = 200000000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--iterations=", 0) == 0 && absl::SimpleAtoi(arg.substr(13), &iterations) &&
        iterations > 0) {
      continue;
    }
    if (arg.rfind("--bomb-bytes=", 0) == 0 && absl::SimpleAtoi(arg.substr(13), &bomb_bytes)) continue;
    std::fprintf(stderr, "usage: runner_bench [--iterations=N] [--bomb-bytes=N]\n");
    return 2;
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return 1;

  // --- The output bomb first, while the process is small. ---
  sandbox::RunRequest bomb;
  bomb.argv = {"/bin/sh", "-c", absl::StrCat("exec head -c ", bomb_bytes, " /dev/zero")};
  bomb.cwd = cwd;
  bomb.stdout_cap = 1 << 20;
  bomb.wall_timeout = absl::Seconds(120);
  bomb.limits.cpu_seconds = 120;
  const bool hwm_reset = ResetPeakRss();
  const long rss_before = StatusKb("VmRSS");
  const long maxrss_before = SelfMaxRssKb();
  const absl::Time bomb_start = absl::Now();
  absl::StatusOr<sandbox::RunResult> bombed = sandbox::Run(bomb);
  const double bomb_seconds = absl::ToDoubleSeconds(absl::Now() - bomb_start);
  const long hwm_after = StatusKb("VmHWM");
  const long maxrss_after = SelfMaxRssKb();
  if (!bombed.ok()) {
    std::fprintf(stderr, "bomb run failed: %s\n", bombed.status().ToString().c_str());
    return 1;
  }
  if (bombed->out.total_bytes != bomb_bytes) {
    std::fprintf(stderr, "bomb run counted %llu bytes, expected %llu\n",
                 static_cast<unsigned long long>(bombed->out.total_bytes),
                 static_cast<unsigned long long>(bomb_bytes));
    return 1;
  }
  const double growth_mib = (hwm_reset && hwm_after >= 0 && rss_before >= 0)
                                ? static_cast<double>(hwm_after - rss_before) / 1024.0
                                : static_cast<double>(maxrss_after - maxrss_before) / 1024.0;
  const double mb_per_s = static_cast<double>(bomb_bytes) / 1e6 / bomb_seconds;
  std::printf("bomb: %llu bytes in %.3f s = %.0f MB/s; kept %zu (cap 1 MiB); runner RSS %ld KiB "
              "before, peak %ld KiB during -> growth %.2f MiB (%s)\n",
              static_cast<unsigned long long>(bomb_bytes), bomb_seconds, mb_per_s,
              bombed->out.data.size(), rss_before, hwm_after, growth_mib,
              hwm_reset ? "VmHWM reset via clear_refs" : "getrusage ru_maxrss growth");

  // --- Spawn overhead, interleaved so both see the same machine load. ---
  sandbox::RunRequest request;
  request.argv = {kTrue};
  request.cwd = cwd;
  for (int i = 0; i < 20; ++i) {  // Warm up page cache and allocator.
    SpawnBare();
    SpawnRunner(request);
  }
  // The same run forced onto fork() (what a layer needing parent help gets, and what POSIX gets).
  const sandbox::PlanExtension force_fork = [](const sandbox::RunRequest&, sandbox::ChildPlan& plan) {
    plan.RequireFork();
    return absl::OkStatus();
  };
  std::vector<double> bare, runner, forked;
  double bare_cpu = 0, runner_cpu = 0, forked_cpu = 0;
  for (int i = 0; i < iterations; ++i) {
    double cpu = CpuMicros();
    bare.push_back(SpawnBare());
    bare_cpu += CpuMicros() - cpu;
    cpu = CpuMicros();
    runner.push_back(SpawnRunner(request));
    runner_cpu += CpuMicros() - cpu;
    cpu = CpuMicros();
    forked.push_back(SpawnRunner(request, force_fork));
    forked_cpu += CpuMicros() - cpu;
  }
  const double ratio_median = Median(runner) / Median(bare);
  const double ratio_mean = Mean(runner) / Mean(bare);
  std::printf("spawn /bin/true x%d: posix_spawn+waitpid median %.0f us (mean %.0f); "
              "sandbox::Run median %.0f us (mean %.0f)\n",
              iterations, Median(bare), Mean(bare), Median(runner), Mean(runner));
  std::printf("spawn /bin/true x%d: sandbox::Run forced to fork() median %.0f us (mean %.0f), "
              "ratio %.2f\n",
              iterations, Median(forked), Mean(forked), Median(forked) / Median(bare));

  const double cpu_ratio = runner_cpu / bare_cpu;
  std::printf("spawn /bin/true x%d: CPU per spawn (ours + child) posix_spawn %.0f us, sandbox::Run "
              "%.0f us, forced fork %.0f us\n",
              iterations, bare_cpu / iterations, runner_cpu / iterations, forked_cpu / iterations);
  std::printf("SUMMARY spawn_ratio_median=%.2f spawn_ratio_mean=%.2f spawn_cpu_ratio=%.2f "
              "(target <= 1.2) rss_growth_mib=%.2f (target < 16) bomb_throughput_mb_s=%.0f\n",
              ratio_median, ratio_mean, cpu_ratio, growth_mib, mb_per_s);
  return 0;
}
