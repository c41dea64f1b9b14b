// Command-line parsing for the standalone `sandbox` command, kept apart from main() so it is tested
// without starting processes.
//
//   sandbox [FLAGS] [--] CMD [ARGS...]
//
// Flags come first; the first argument that is not a flag (or everything after `--`) is the command,
// so `sandbox -- ls --json` passes `--json` to ls. Value flags take `--flag=VALUE` or `--flag VALUE`.
//
// Thread-safety: pure functions.
#ifndef SANDBOX_CLI_FLAGS_H_
#define SANDBOX_CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sandbox/isolation.h"
#include "sandbox/runner.h"

namespace sandbox::cli {

struct FlagDoc {
  absl::string_view name;   // "--timeout"
  absl::string_view value;  // "SECONDS", or empty for a switch.
  absl::string_view help;
};

// Every flag, in --help order.
std::span<const FlagDoc> AllFlags();

// The full --help text.
std::string UsageText();

struct CliOptions {
  bool help = false;
  bool json = false;
  bool inherit_env = false;
  std::string workspace;  // Empty: the current directory.
  std::string cwd;        // Relative to the workspace; empty: the workspace itself.
  absl::Duration timeout = absl::Seconds(30);
  absl::Duration grace = absl::Seconds(2);
  Limits limits;
  uint64_t output_cap = 1 << 20;
  std::vector<std::pair<std::string, std::string>> env;  // --env, in order; later wins.
  std::optional<std::string> stdin_file;                 // "-": the command's own stdin.
  IsolationFlagValues isolation;  // --isolate, --require, ...: the kernel layers (isolation.h).
  std::vector<std::string> command;
};

// Parses the arguments after argv[0]. Errors (EINVAL) are one line naming the flag.
absl::StatusOr<CliOptions> ParseCommandLine(const std::vector<std::string>& args);

// "64M" -> 67108864. Suffixes K, M, G, T (powers of 1024, either case); plain digits are bytes.
absl::StatusOr<uint64_t> ParseBytes(absl::string_view text);

// "1.5" -> 1.5 s. Must be positive.
absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text);

// The RunRequest the options describe. `current_dir` is the default workspace; `parent_env` is used
// with --inherit-env; `read_stdin` reads all of the command's own stdin (for --stdin=-).
absl::StatusOr<RunRequest> BuildRequest(const CliOptions& options, const std::string& current_dir,
                                        const std::map<std::string, std::string>& parent_env,
                                        const std::function<absl::StatusOr<std::string>()>& read_stdin);

// The exit status of `sandbox`, like timeout(1): 124 on timeout, 128+N when signal N ended the
// command, otherwise the command's own status. (125 is for sandbox errors, decided by main.)
int ExitStatusFor(const RunResult& result);

inline constexpr int kExitTimeout = 124;
inline constexpr int kExitSandboxError = 125;

}  // namespace sandbox::cli

#endif  // SANDBOX_CLI_FLAGS_H_
