// Fixtures the isolation tests share (isolation_linux_test, isolation_pool_test): a workspace
// directory, the host processes whose command line carries a token, a prefix search over the
// result's layer lists, and a skip that names the missing layer and why. Test-only.
#ifndef SANDBOX_LINUX_ISOLATION_TEST_UTIL_H_
#define SANDBOX_LINUX_ISOLATION_TEST_UTIL_H_

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/types.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "sandbox/isolation.h"

namespace sandbox {

// A fresh directory under TEST_TMPDIR (or /var/tmp), named `<prefix>-XXXXXX`, as its real path.
inline std::string MakeWorkspace(absl::string_view prefix) {
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr ? base : "/var/tmp", "/", prefix, "-XXXXXX");
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  char real[PATH_MAX];
  EXPECT_NE(realpath(tmpl.c_str(), real), nullptr);
  return real;
}

// Pids of host processes whose command line contains `token`.
inline std::vector<pid_t> FindProcesses(const std::string& token) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = readdir(proc)) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"));
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(token) != std::string::npos) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

// This process's children, from every thread's /proc/self/task/<tid>/children.
inline std::set<pid_t> OurChildren() {
  std::set<pid_t> out;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(absl::StrCat("/proc/self/task/", e->d_name, "/children"));
      for (pid_t pid; in >> pid;) out.insert(pid);
    }
    closedir(d);
  }
  return out;
}

// Whether some entry of `v` starts with `prefix`.
inline bool Has(const std::vector<std::string>& v, absl::string_view prefix) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return absl::StartsWith(s, prefix); });
}

// "" when every layer in `layers` is available here; else the first missing one and the probe's
// reason, e.g. "landlock: kernel built without CONFIG_SECURITY_LANDLOCK (Linux >= 5.13)".
inline std::string MissingLayer(const std::set<Layer>& layers) {
  for (const LayerStatus& s : ProbeLayers()) {
    if (layers.count(s.layer) != 0 && !s.available) return absl::StrCat(LayerName(s.layer), ": ", s.detail);
  }
  return "";
}

}  // namespace sandbox

// Skips the test, naming the missing kernel feature, unless every listed layer is available.
#define SKIP_UNLESS_LAYERS(...)                                                      \
  if (const std::string missing_layer = ::sandbox::MissingLayer({__VA_ARGS__});       \
      !missing_layer.empty())                                                        \
  GTEST_SKIP() << "needs " << missing_layer

#endif  // SANDBOX_LINUX_ISOLATION_TEST_UTIL_H_
