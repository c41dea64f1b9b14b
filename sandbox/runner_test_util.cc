#include "sandbox/runner_test_util.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sandbox::testing {

std::string HelperPath() {
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) std::abort();
  // Tests run in their runfiles tree, in the directory of the main workspace.
  return absl::StrCat(cwd, "/sandbox/runner_test_helper");
}

std::string MakeTempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = absl::StrCat(base != nullptr ? base : "/tmp", "/run.XXXXXX");
  if (mkdtemp(templ.data()) == nullptr) std::abort();
  char real[PATH_MAX];
  if (realpath(templ.c_str(), real) == nullptr) std::abort();
  return real;
}

RunRequest Request(std::vector<std::string> argv) {
  RunRequest request;
  request.argv = std::move(argv);
  request.cwd = MakeTempDir();
  request.wall_timeout = absl::Seconds(20);
  request.kill_grace = absl::Milliseconds(300);
  return request;
}

bool IsGone(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat) return false;  // No /proc (macOS): kill() said it exists.
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) std::abort();
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace sandbox::testing
