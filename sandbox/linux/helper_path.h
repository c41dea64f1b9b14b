// Where tests find `hardening_helper` so that a sandboxed run can exec it. The runfiles copy sits
// under Bazel's output base; when that is below /tmp (a --output_base or a mutation scratch copy
// there), the sandbox's private /tmp hides it, so it is copied once to /var/tmp, which the
// read-only root shows. Test-only; not thread-safe on first use.
#ifndef SANDBOX_LINUX_HELPER_PATH_H_
#define SANDBOX_LINUX_HELPER_PATH_H_

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sandbox {

inline std::string HardeningHelperPath() {
  static const std::string path = [] {
    char cwd[PATH_MAX];
    std::string in_runfiles = std::string(getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".") +
                              "/sandbox/linux/hardening_helper";
    char real[PATH_MAX];
    std::string resolved = realpath(in_runfiles.c_str(), real) != nullptr ? real : in_runfiles;
    if (resolved.rfind("/tmp/", 0) != 0) return in_runfiles;
    std::string copy = "/var/tmp/sandboxed-agent-hardening-helper." + std::to_string(getpid());
    {
      std::ifstream src(resolved, std::ios::binary);
      std::ofstream dst(copy, std::ios::binary | std::ios::trunc);
      dst << src.rdbuf();
    }
    chmod(copy.c_str(), 0755);
    static std::string to_remove = copy;
    std::atexit([] { unlink(to_remove.c_str()); });
    return copy;
  }();
  return path;
}

}  // namespace sandbox

#endif  // SANDBOX_LINUX_HELPER_PATH_H_
