// Small helpers shared by the red-team cases: scratch directories, files, process inspection.
//
// Test-only. Not thread-safe unless stated; each case calls them from its own thread.
#ifndef REDTEAM_TESTING_H_
#define REDTEAM_TESTING_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace redteam {

// A fresh directory under $TEST_TMPDIR (or /tmp), removed with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view prefix = "redteam");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + rel.
  std::string Join(std::string_view rel) const;

 private:
  std::string path_;
};

// Writes `data` to `path` (created or truncated); false on any failure.
bool WriteFile(const std::string& path, std::string_view data);
// The whole content of `path`, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);
// True when something (file, directory, dangling symlink) exists at `path`.
bool Exists(const std::string& path);

// The wire name of the error code a status carries ("EPERM"), or "OK".
std::string CodeName(const absl::Status& status);
template <typename T>
std::string CodeName(const absl::StatusOr<T>& status_or) {
  return CodeName(status_or.status());
}

// True when `pid` no longer runs: no such process, or a zombie waiting for a reaper that is not us.
bool ProcessGone(pid_t pid);
// The pids of running (non-zombie) processes whose process group is `pgid`, read from /proc.
std::vector<pid_t> LiveProcessesInGroup(pid_t pgid);
// The number of open file descriptors of this process.
int CountOpenFds();
// Pids of processes (other than this one) whose command line contains `marker`.
std::vector<pid_t> ProcessesWithMarker(std::string_view marker);
// SIGKILLs every process whose command line contains `marker`; returns how many it signalled.
int KillProcessesWithMarker(std::string_view marker);
// A marker unique to this process and call, for tagging the command lines of a case's children.
std::string UniqueMarker(std::string_view what);
// Reads a decimal pid written by a child into `path`, polling until it appears (at most ~10 s).
std::optional<pid_t> AwaitPidFile(const std::string& path);

}  // namespace redteam

#endif  // REDTEAM_TESTING_H_
