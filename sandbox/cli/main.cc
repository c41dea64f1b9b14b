// `sandbox`: run one command through the sandbox runner, like timeout(1) with a process group, rlimits,
// closed fds, an explicit environment and capped output. See --help (flags.cc) for the flags.
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "sandbox/cli/flags.h"
#include "sandbox/run_result_json.h"
#include "sandbox/isolation.h"
#include "sandbox/runner.h"

namespace {

// Set by SIGINT/SIGTERM/SIGHUP: the runner then ends the command's whole group (as timeout(1) passes
// the signal on), so an interrupted `sandbox` never leaves its command running.
std::atomic<bool> g_cancel{false};
volatile sig_atomic_t g_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "stored from a signal handler");

void OnSignal(int sig) {
  g_signal = sig;
  g_cancel.store(true);
}

void InstallCancelHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // No SA_RESTART: the signal interrupts the runner's poll at once.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

// Writes all of `data` to `fd`; a closed reader (EPIPE) just ends the writing.
void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n == -1 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int Fail(bool json, const absl::Status& status) {
  const std::string line =
      absl::StrReplaceAll(status.message(), {{"\n", " "}, {"\r", " "}});
  std::fprintf(stderr, "sandbox: %s\n", line.c_str());
  if (json) {
    WriteAll(STDOUT_FILENO,
             absl::StrCat(nlohmann::json{{"error", sandbox::ErrorToJson(status)}}.dump(), "\n"));
  }
  return sandbox::cli::kExitSandboxError;
}

absl::StatusOr<std::string> ReadOurStdin() {
  std::string data;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n == 0) return data;
    if (n == -1) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("read(stdin): ", std::strerror(errno)));
    }
    data.append(buffer, static_cast<size_t>(n));
  }
}

void NoteTruncation(const char* name, const sandbox::StreamCapture& stream) {
  if (!stream.truncated) return;
  std::fprintf(stderr, "sandbox: %s truncated: kept %zu of %llu bytes (raise --output-cap)\n", name,
               stream.data.size(), static_cast<unsigned long long>(stream.total_bytes));
}

// `sandbox doctor [--json]`: each isolation layer on this machine, available or not, and why.
int Doctor(const std::vector<std::string>& args) {
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "sandbox: doctor: unknown argument '%s' (only --json)\n", args[i].c_str());
      return sandbox::cli::kExitSandboxError;
    }
  }
  const sandbox::DoctorReport report = sandbox::Doctor();
  WriteAll(STDOUT_FILENO, json ? absl::StrCat(sandbox::DoctorJson(report), "\n") : sandbox::DoctorText(report));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Our own output may go to a closed pipe (`sandbox ... | head`): report nothing, do not die.
  // The command itself gets default signal dispositions from the runner.
  signal(SIGPIPE, SIG_IGN);
  // `bazel run` starts us in the runfiles tree; relative paths mean the caller's directory.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && *dir != '\0') {
    if (chdir(dir) == -1) {
      std::fprintf(stderr, "sandbox: chdir(%s): %s\n", dir, std::strerror(errno));
      return sandbox::cli::kExitSandboxError;
    }
  }

  InstallCancelHandlers();
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "doctor") return Doctor(args);
  absl::StatusOr<sandbox::cli::CliOptions> options = sandbox::cli::ParseCommandLine(args);
  if (!options.ok()) return Fail(false, options.status());
  if (options->help) {
    WriteAll(STDOUT_FILENO, sandbox::cli::UsageText());
    return 0;
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) {
    return Fail(options->json, absl::InternalError(absl::StrCat("getcwd: ", std::strerror(errno))));
  }
  absl::StatusOr<sandbox::RunRequest> request =
      sandbox::cli::BuildRequest(*options, cwd, sandbox::ParentEnvironment(), ReadOurStdin);
  if (!request.ok()) return Fail(options->json, request.status());

  request->cancel = &g_cancel;
  const std::string workspace =
      options->workspace.empty() ? std::string(cwd)
      : options->workspace[0] == '/' ? options->workspace
                                     : absl::StrCat(cwd, "/", options->workspace);
  absl::StatusOr<sandbox::IsolationOptions> isolation =
      sandbox::IsolationFromFlags(options->isolation, workspace);
  if (!isolation.ok()) return Fail(options->json, isolation.status());
  absl::StatusOr<sandbox::RunResult> result = sandbox::WantsIsolation(*isolation)
                                                  ? sandbox::RunIsolated(*request, *isolation)
                                                  : sandbox::Run(*request);
  if (!result.ok()) return Fail(options->json, result.status());

  if (options->json) {
    WriteAll(STDOUT_FILENO, absl::StrCat(sandbox::RunResultToJson(*result).dump(), "\n"));
  } else {
    WriteAll(STDOUT_FILENO, result->out.data);
    WriteAll(STDERR_FILENO, result->err.data);
    NoteTruncation("stdout", result->out);
    NoteTruncation("stderr", result->err);
    for (const std::string& missing : result->layers_unavailable) {
      std::fprintf(stderr, "sandbox: isolation layer not applied: %s\n", missing.c_str());
    }
    if (result->memory_limit_killed) {
      std::fprintf(stderr, "sandbox: killed by the memory limit (cgroup); raise --cgroup-memory\n");
    }
    if (result->timed_out) std::fprintf(stderr, "sandbox: timed out; the process group was killed\n");
    if (result->cancelled) {
      std::fprintf(stderr, "sandbox: interrupted by signal %d; the process group was killed\n",
                   static_cast<int>(g_signal));
    }
  }
  if (result->cancelled) return 128 + static_cast<int>(g_signal);
  return sandbox::cli::ExitStatusFor(*result);
}
