// Helpers shared by the runner tests.
#ifndef SANDBOX_RUNNER_TEST_UTIL_H_
#define SANDBOX_RUNNER_TEST_UTIL_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/runner.h"

namespace sandbox::testing {

// Absolute path of //sandbox:runner_test_helper in the test's runfiles.
std::string HelperPath();

// A fresh directory under TEST_TMPDIR (absolute, symlinks resolved).
std::string MakeTempDir();

// A request for `argv` in a fresh temp dir with short timeouts suited to tests.
RunRequest Request(std::vector<std::string> argv);

// True when `pid` no longer exists or is a zombie (a dead process waiting for its parent to reap it).
bool IsGone(pid_t pid);

std::string ReadFileOrDie(const std::string& path);

}  // namespace sandbox::testing

#endif  // SANDBOX_RUNNER_TEST_UTIL_H_
