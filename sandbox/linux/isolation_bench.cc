// Spawn cost of each isolation layer set: /bin/true through a bare posix_spawn + waitpid (the
// baseline), the portable runner, the runner with namespaces, + cgroup, + Landlock and seccomp, and
// everything; everything through an IsolationPool (cold: a new pool, its first seed started on the
// run's path; warm: the seed prepared before the run; back-to-back: two runs in a row, the second
// waiting for its seed); and `bwrap --unshare-all` when bwrap is installed. Each row is the whole
// per-run latency (request -> exit status reaped, cgroup verdict read), as mean microseconds and as
// ratios to the baseline and to bwrap measured in the same interleaved run.
//
// Honesty: a pool's background work (the next seed, removing the last run's cgroup) is waited for
// after its row, untimed, so it never overlaps another row's measurement.
//
//   bazel run -c opt //sandbox/linux:isolation_bench -- [iterations]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <memory>

#include "absl/time/clock.h"
#include "sandbox/isolation.h"

extern char** environ;

namespace {

using sandbox::IsolationOptions;
using sandbox::Layer;

bool SpawnAndWait(const std::vector<const char*>& argv) {
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv.data()), environ) != 0) {
    return false;
  }
  int status;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::function<bool()> RunWith(const std::string& cwd, std::set<Layer> layers) {
  return [cwd, layers] {
    sandbox::RunRequest r;
    r.argv = {"/bin/true"};
    r.cwd = cwd;
    IsolationOptions o;
    o.enabled = layers;
    o.required = layers;  // A layer that cannot apply would make the figure meaningless.
    absl::StatusOr<sandbox::RunResult> res = sandbox::RunIsolated(r, o);
    if (!res.ok()) std::fprintf(stderr, "%s\n", std::string(res.status().message()).c_str());
    return res.ok() && res->exit_code == 0;
  };
}

sandbox::RunRequest TrueRequest(const std::string& cwd) {
  sandbox::RunRequest r;
  r.argv = {"/bin/true"};
  r.cwd = cwd;
  return r;
}

bool PoolRun(sandbox::IsolationPool& pool, const std::string& cwd) {
  absl::StatusOr<sandbox::RunResult> res = pool.Run(TrueRequest(cwd));
  if (!res.ok()) std::fprintf(stderr, "%s\n", std::string(res.status().message()).c_str());
  return res.ok() && res->exit_code == 0;
}

IsolationOptions Required(const std::set<Layer>& layers) {
  IsolationOptions o;
  o.enabled = layers;
  o.required = layers;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200;
  char tmpl[] = "/tmp/isolation-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string ws = tmpl;
  const std::set<Layer> ns = {Layer::kUserNs, Layer::kMountNs, Layer::kPidNs,
                              Layer::kNetNs,  Layer::kIpcNs,   Layer::kUtsNs};
  std::set<Layer> ns_cg = ns;
  ns_cg.insert(Layer::kCgroup);
  const std::set<Layer> confine = {Layer::kCapabilities, Layer::kNoNewPrivs, Layer::kLandlock, Layer::kSeccomp};
  std::set<Layer> all(sandbox::AllLayers().begin(), sandbox::AllLayers().end());

  struct Row {
    std::string name;
    std::function<bool()> fn;
    std::function<void()> after = nullptr;  // Untimed: wait for background work.
  };
  sandbox::IsolationPool warm_pool(Required(all));
  sandbox::IsolationPool pair_pool(Required(all));
  std::unique_ptr<sandbox::IsolationPool> cold_pool;
  std::vector<Row> rows = {
      {"bare posix_spawn+waitpid", [] { return SpawnAndWait({"/bin/true", nullptr}); }},
      {"runner (portable layers)", RunWith(ws, {})},
      {"+ userns", RunWith(ws, {Layer::kUserNs})},
      {"+ userns + mountns", RunWith(ws, {Layer::kUserNs, Layer::kMountNs})},
      {"+ userns + pidns", RunWith(ws, {Layer::kUserNs, Layer::kPidNs})},
      {"+ userns + netns", RunWith(ws, {Layer::kUserNs, Layer::kNetNs})},
      {"+ userns + ipcns", RunWith(ws, {Layer::kUserNs, Layer::kIpcNs})},
      {"+ cgroup", RunWith(ws, {Layer::kCgroup})},
      {"+ namespaces", RunWith(ws, ns)},
      {"+ namespaces + cgroup", RunWith(ws, ns_cg)},
      {"+ caps, nnp, landlock, seccomp", RunWith(ws, confine)},
      {"all layers", RunWith(ws, all)},
      {"all layers, pool cold", [&] {
         cold_pool = std::make_unique<sandbox::IsolationPool>(Required(all));
         return PoolRun(*cold_pool, ws);
       }, [&] { cold_pool.reset(); }},
      {"all layers, pool warm", [&] { return PoolRun(warm_pool, ws); }, [&] { warm_pool.WaitIdle(); }},
      {"all layers, pool back-to-back", [&] { return PoolRun(pair_pool, ws) && PoolRun(pair_pool, ws); },
       [&] { pair_pool.WaitIdle(); }},
  };
  if (access("/usr/bin/bwrap", X_OK) == 0) {
    rows.push_back({"bwrap --unshare-all --ro-bind / /", [] {
                      return SpawnAndWait({"/usr/bin/bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                                           "--proc", "/proc", "/bin/true", nullptr});
                    }});
  }
  if (argc > 2) {  // Keep the baseline and the rows whose name contains argv[2].
    std::vector<Row> kept = {rows[0]};
    for (size_t r = 1; r < rows.size(); ++r) {
      if (rows[r].name.find(argv[2]) != std::string::npos) kept.push_back(rows[r]);
    }
    rows = kept;
  }
  // Interleaved: each iteration runs every row once, so load on a shared machine drifts evenly over
  // all rows and the ratios stay comparable.
  std::vector<double> total_us(rows.size(), 0);
  std::vector<bool> failed(rows.size(), false);
  for (int i = -2; i < n; ++i) {  // Two warm-up rounds.
    for (size_t r = 0; r < rows.size(); ++r) {
      if (failed[r]) continue;
      absl::Time start = absl::Now();
      if (!rows[r].fn()) failed[r] = true;
      const double us = absl::ToDoubleMicroseconds(absl::Now() - start);
      // back-to-back times two runs: count it per run.
      if (i >= 0) total_us[r] += rows[r].name.find("back-to-back") != std::string::npos ? us / 2 : us;
      if (rows[r].after) rows[r].after();
    }
  }
  std::printf("spawn /bin/true, %d interleaved iterations\n", n);
  std::printf("%-36s %12s %10s %10s\n", "configuration", "mean_us", "x_bare", "x_bwrap");
  const double base = total_us[0] / n;
  double bwrap_us = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!failed[r] && rows[r].name.rfind("bwrap", 0) == 0) bwrap_us = total_us[r] / n;
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    if (failed[r]) {
      std::printf("%-36s %12s %10s %10s\n", rows[r].name.c_str(), "failed", "-", "-");
      continue;
    }
    const double us = total_us[r] / n;
    if (bwrap_us > 0) {
      std::printf("%-36s %12.1f %10.2f %10.2f\n", rows[r].name.c_str(), us, us / base, us / bwrap_us);
    } else {
      std::printf("%-36s %12.1f %10.2f %10s\n", rows[r].name.c_str(), us, us / base, "-");
    }
  }
  if (bwrap_us > 0) std::printf("target: all layers <= 0.5 x bwrap\n");
  rmdir(ws.c_str());
  return 0;
}
