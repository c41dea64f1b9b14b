// Spawn cost of each isolation layer set: /bin/true through a bare posix_spawn + waitpid (the
// baseline), the portable runner, the runner with namespaces, + cgroup, + Landlock and seccomp, and
// everything; and `bwrap --unshare-all` when bwrap is installed. Prints each as mean microseconds
// and as a ratio to the baseline measured in the same run.
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
  };
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
      if (i >= 0) total_us[r] += absl::ToDoubleMicroseconds(absl::Now() - start);
    }
  }
  std::printf("spawn /bin/true, %d interleaved iterations\n", n);
  std::printf("%-36s %12s %10s\n", "configuration", "mean_us", "x_bare");
  const double base = total_us[0] / n;
  double all_us = 0, bwrap_us = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (failed[r]) {
      std::printf("%-36s %12s %10s\n", rows[r].name.c_str(), "failed", "-");
      continue;
    }
    const double us = total_us[r] / n;
    if (rows[r].name == "all layers") all_us = us;
    if (rows[r].name.rfind("bwrap", 0) == 0) bwrap_us = us;
    std::printf("%-36s %12.1f %10.2f\n", rows[r].name.c_str(), us, us / base);
  }
  if (all_us > 0 && bwrap_us > 0) {
    std::printf("all layers / bwrap = %.2f (target <= 0.5)\n", all_us / bwrap_us);
  }
  rmdir(ws.c_str());
  return 0;
}
