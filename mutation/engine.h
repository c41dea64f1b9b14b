// The run: load and check the catalog, generate and select mutants, mirror the checkout into
// scratch copies, run the baseline, then each mutant (build, then its covering tests), and write
// the reports. The checkout is never written. Thread-safe to call once at a time per cache dir
// (a lock file enforces it).
#ifndef MUTATION_ENGINE_H_
#define MUTATION_ENGINE_H_

#include <atomic>
#include <string>
#include <vector>

namespace mutation {

// Exit codes of `bazel run //mutation:check` (also in --help and README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;      // the runner or Bazel failed; nothing was judged
inline constexpr int kExitUsage = 2;         // bad flags, or the catalog / skip markers are wrong
inline constexpr int kExitSurvivors = 3;     // a curated mutant was not killed
inline constexpr int kExitBaseline = 4;      // the unmutated tests fail: nothing to measure against
inline constexpr int kExitLowScore = 5;      // the generated score is below thresholds.break
// Interrupted by SIGINT / SIGTERM: 128 + the signal, as a shell reports it (130 / 143).

struct Options {
  std::string repo;                 // the checkout (BUILD_WORKSPACE_DIRECTORY under bazel run)
  std::string cache_dir;            // scratch copies, output bases, reports
  std::string bazel = "bazel";
  std::vector<std::string> bazel_args;  // passed to every build/test/query (--config=remote, ...)
  std::string catalog = "mutation/catalog.json";  // relative to repo
  std::vector<std::string> roots = {"sandbox", "agent"};  // where mutants are generated
  std::vector<std::string> files;   // only these files (exact path or directory prefix)
  std::string in_diff;              // only lines changed since this git revision
  int shard_k = 0, shard_n = 1;
  int jobs = 1;
  double timeout_factor = 3.0;
  double timeout_extra = 20.0;      // seconds
  // How generated mutants run: "schemata" (one build per file, switches at run time, tests run
  // from bazel-bin; see schemata.h) or "classic" (one Bazel build and test per mutant, as curated
  // mutants always run).
  std::string engine = "schemata";
  int test_jobs = 0;                // test processes at once in the schemata engine; 0: one per core
  double build_timeout = 1800.0;    // seconds, per mutant build
  bool catalog_only = false;
  bool generated_only = false;
  bool list = false;
  bool keep_server = false;
  bool resume = false;              // take verdicts from this tree's journal (journal.h)
  std::string report_dir;           // empty: <cache_dir>/report
};

// Runs everything; returns the process exit code. `stop_signal` becomes non-zero when SIGINT or
// SIGTERM arrives (set by main's handler); the run then stops its Bazel commands, restores the
// scratch copy and returns 128 + signal.
int RunMutation(const Options& options, const std::atomic<int>* stop_signal);

// Parses "k/n" (0 <= k < n). False on anything else.
bool ParseShard(const std::string& text, int* k, int* n);

// The failed gtest cases named in Bazel's output of failing test logs, first seen first.
std::vector<std::string> FailedCases(const std::string& output);

// Changed line numbers per file in `git diff -U0` output (the new side).
std::vector<std::pair<std::string, std::vector<std::pair<int, int>>>> ParseDiffHunks(
    const std::string& diff);

}  // namespace mutation

#endif  // MUTATION_ENGINE_H_
