// The schemata engine for generated mutants: every mutated file is compiled once with all of its
// mutants behind runtime switches (schema.h), the covering tests are found per gtest case from a
// coverage run of the unmutated schema build, and each mutant then costs only its covering cases,
// run straight from the scratch copy's bazel-bin (no Bazel command per mutant). Mutants whose
// site cannot be switched (the compiler refused it) take the classic path on top of the schema
// build: write, build, run.
//
// Thread-compatible: one call at a time per scratch copy; runs `test_jobs` test processes at once.
#ifndef MUTATION_SCHEMATA_H_
#define MUTATION_SCHEMATA_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "mutation/bazel.h"
#include "mutation/mutant.h"
#include "mutation/scratch.h"

namespace mutation {

struct SchemataConfig {
  Scratch* scratch = nullptr;
  Bazel* bazel = nullptr;
  const std::map<std::string, std::string>* sources = nullptr;  // original content per file
  std::string work_dir;      // coverage maps, test temp dirs, logs
  int test_jobs = 2;
  double timeout_factor = 3.0;
  double timeout_extra = 20.0;
  double build_timeout = 1800.0;
  // Called after each mutant's verdict (from the worker threads, serialized by the caller).
  std::function<void(const Mutant&)> on_done;
};

// Runs `mutants` (generated, with covered_by set to their files' test targets). Returns 0 when
// they ran (their statuses say how it went), or the runner's exit code to stop with: kExitBaseline
// when the unmutated schema build's tests fail (the message says which), kExitInternal,
// or 128 + signal when *stop turned non-zero.
int RunSchemata(const SchemataConfig& config, std::vector<Mutant*>& mutants,
                const std::atomic<int>* stop, std::string* message);

// The workspace name of the WORKSPACE file (`workspace(name = "x")`), "__main__" when unnamed:
// the directory a test's runfiles put the main repository under.
std::string WorkspaceName(const std::string& workspace_file_text);

// The test names `--gtest_list_tests` prints ("Suite.Case", "Prefix/Suite.Case/0"), without
// disabled ones.
std::vector<std::string> ParseGtestList(const std::string& output);

}  // namespace mutation

#endif  // MUTATION_SCHEMATA_H_
