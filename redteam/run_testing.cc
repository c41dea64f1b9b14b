#include "redteam/run_testing.h"

#include <signal.h>

#include <chrono>
#include <future>
#include <optional>

#include "redteam/testing.h"

namespace redteam {

RescuedRun RunWithRescue(const sandbox::RunRequest& request, absl::Duration bound,
                         const std::vector<std::string>& pid_files, const std::string& marker) {
  std::future<absl::StatusOr<sandbox::RunResult>> pending =
      std::async(std::launch::async, [&request] { return sandbox::Run(request); });
  RescuedRun rescued;
  const auto wait = std::chrono::milliseconds(absl::ToInt64Milliseconds(bound));
  while (pending.wait_for(wait) != std::future_status::ready) {
    rescued.hung = true;
    for (const std::string& file : pid_files) {
      std::optional<std::string> text = ReadFile(file);
      if (text.has_value() && !text->empty()) kill(static_cast<pid_t>(std::atol(text->c_str())), SIGKILL);
    }
    if (!marker.empty()) KillProcessesWithMarker(marker);
  }
  rescued.result = pending.get();
  return rescued;
}

sandbox::RunRequest ShellRequest(const std::string& cwd, const std::string& script,
                                 const std::string& marker) {
  sandbox::RunRequest request;
  request.argv = {"/bin/sh", "-c", script, marker};
  request.cwd = cwd;
  request.wall_timeout = absl::Seconds(10);
  request.kill_grace = absl::Milliseconds(500);
  return request;
}

}  // namespace redteam
