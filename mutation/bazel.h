// The nested Bazel the runner drives inside a scratch copy: its own output base (the outer
// `bazel run` server holds the checkout's lock), a disk cache shared by every scratch copy so a
// restored file is a cache hit, and the caller's pass-through flags (--config=remote, ...) on every
// command. The binary is injectable (--bazel=PATH) so the runner's tests use a fake.
// Thread-compatible: one Bazel object per scratch copy.
#ifndef MUTATION_BAZEL_H_
#define MUTATION_BAZEL_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mutation {

// Bazel's documented exit codes (https://bazel.build/run/scripts#exit-codes).
inline constexpr int kBazelOk = 0;
inline constexpr int kBazelBuildFailed = 1;
inline constexpr int kBazelBadCommandLine = 2;
inline constexpr int kBazelTestsFailed = 3;
inline constexpr int kBazelNoTests = 4;
inline constexpr int kBazelInterrupted = 8;

struct BazelConfig {
  std::string binary = "bazel";
  std::string workspace;                  // the scratch copy
  std::string output_base;
  std::string disk_cache;                 // empty: none
  std::string log_dir;                    // where each command's output is kept
  std::vector<std::string> command_args;  // after the command: --config=remote, --bazel-arg=...
  std::vector<std::string> build_args;    // build options the runner adds (build/test/info/cquery)
  int max_idle_secs = 900;
};

// One test target's line in Bazel's summary ("//a:b   FAILED in 0.4s").
struct TargetResult {
  std::string label;
  std::string status;  // PASSED, FAILED, TIMEOUT, FLAKY, NO STATUS, FAILED TO BUILD, ...
};

// Parses the test summary lines out of `bazel test` output.
std::vector<TargetResult> ParseTestSummary(const std::string& output);

enum class Outcome {
  kPassed,       // exit 0
  kTestsFailed,  // exit 3
  kBuildFailed,  // exit 1: the code does not compile (or a BUILD error)
  kNoTests,      // exit 4
  kTimedOut,     // our deadline passed
  kInterrupted,  // we were asked to stop, or Bazel said 8
  kBazelError,   // anything else: Bazel itself failed, the result says nothing about the code
};

struct CommandResult {
  Outcome outcome = Outcome::kBazelError;
  int exit_code = -1;
  double seconds = 0;
  std::string log_path;
  std::string output;                  // the combined output, for parsing and error messages
  std::vector<TargetResult> targets;   // test summary (test only)
};

class Bazel {
 public:
  explicit Bazel(BazelConfig config) : config_(std::move(config)) {}

  // `bazel build` of targets (which for test rules builds the test binaries).
  absl::StatusOr<CommandResult> Build(const std::vector<std::string>& targets, double timeout,
                                      const std::atomic<int>* stop, const std::string& tag);
  // `bazel build --keep_going`: every failing action reports, so one round sees all the errors.
  absl::StatusOr<CommandResult> BuildKeepGoing(const std::vector<std::string>& targets,
                                               double timeout, const std::atomic<int>* stop,
                                               const std::string& tag);
  // `bazel info KEY` under the same configuration flags as Build (e.g. "bazel-bin").
  absl::StatusOr<std::string> Info(const std::string& key, const std::atomic<int>* stop);
  // The rule kind of each target ("cc_test", "sh_test", ...), by label.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> RuleKinds(
      const std::vector<std::string>& targets, const std::atomic<int>* stop);
  // The `args` attribute of each test target (as written, `$(location ...)` unexpanded), by label:
  // what Bazel passes a test on its command line.
  absl::StatusOr<std::map<std::string, std::vector<std::string>>> TestArgs(
      const std::vector<std::string>& targets, const std::atomic<int>* stop);
  // The labels of the source files the configured build of `targets` compiles (cquery, so a
  // select() that leaves a file out for this platform or --config leaves it out here too).
  absl::StatusOr<std::vector<std::string>> CompiledSources(const std::vector<std::string>& targets,
                                                           const std::atomic<int>* stop);
  // `bazel test`, never from cached results.
  absl::StatusOr<CommandResult> Test(const std::vector<std::string>& targets, double timeout,
                                     const std::atomic<int>* stop,
                                     const std::string& tag);
  // The non-manual test targets that depend on repository file `path` (a source or header), or an
  // empty list when no package owns it or no test reaches it.
  absl::StatusOr<std::vector<std::string>> TestsDependingOn(const std::string& path,
                                                            const std::atomic<int>* stop);
  // Stops this output base's server.
  absl::Status Shutdown();

  const BazelConfig& config() const { return config_; }
  // Adds a build option to every later build, test, info and cquery command (not query, which
  // takes no build options).
  void AddBuildArg(std::string arg) { config_.build_args.push_back(std::move(arg)); }

 private:
  absl::StatusOr<CommandResult> Run(const std::string& command,
                                    const std::vector<std::string>& args, double timeout,
                                    const std::atomic<int>* stop, const std::string& tag);
  BazelConfig config_;
};

// Expands `$(location L)`, `$(locations L)`, `$(rootpath L)`, `$(execpath L)` in a test argument
// written in package `package` to L's path relative to the runfiles root of the main repository,
// which is where a test runs.
std::string ExpandTestArg(const std::string& arg, const std::string& package);

// The label of repository file `path` given the workspace (nearest package with a BUILD file), or
// "" when no package owns it.
std::string FileLabel(const std::string& workspace, const std::string& path);

}  // namespace mutation

#endif  // MUTATION_BAZEL_H_
