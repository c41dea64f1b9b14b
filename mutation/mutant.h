// The unit of work of the mutation runner: one single-site textual change to one source file, and
// what became of it. Plain data; safe to copy between threads.
#ifndef MUTATION_MUTANT_H_
#define MUTATION_MUTANT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace mutation {

// Outcomes, named as in the mutation-testing-elements schema so the JSON report needs no mapping.
enum class MutantStatus {
  kPending,       // not run (yet): --list, or the run was interrupted before it
  kKilled,        // at least one covering test failed
  kSurvived,      // every covering test passed: the tests did not notice the bug
  kTimeout,       // the tests ran past the mutant's deadline (counts as detected, like Mull/Stryker)
  kCompileError,  // the mutated tree does not build: unviable, neither killed nor survived
  kNoCoverage,    // no test target depends on the mutated file
  kRuntimeError,  // Bazel itself failed (crash, lock, bad flag): the result says nothing
  kIgnored,       // the file is not built in this configuration (a select() leaves it out)
};

const char* StatusName(MutantStatus status);

struct Mutant {
  std::string id;            // stable: "file:line:operator:index" or "catalog:<entry id>"
  std::string file;          // repository-relative path, '/' separated
  std::string mutator;       // operator name, e.g. "RelationalOperator"; "Curated" for the catalog
  bool curated = false;
  std::string boundary;      // catalog only: the boundary the mutant attacks
  std::string why;           // catalog only: why a surviving mutant matters
  // The change: bytes [offset, offset + original.size()) of the file are replaced.
  std::size_t offset = 0;
  std::string original;
  std::string replacement;
  // 1-based positions of the original text (end column is one past the last character).
  int line = 0;
  int column = 0;
  int end_line = 0;
  int end_column = 0;

  // Outcome.
  MutantStatus status = MutantStatus::kPending;
  std::string status_reason;
  std::vector<std::string> covered_by;  // test targets that ran
  std::vector<std::string> killed_by;   // test targets that failed
  double seconds = 0;
};

// Applies `m` to `text` (the file's current content). Returns false when the bytes at m.offset are
// not m.original or the result equals the input: the mutation would not change the file.
bool ApplyMutant(const Mutant& m, const std::string& text, std::string* out);

// A unified diff of the one changed region (with `context` lines around it), for reports.
std::string MutantDiff(const Mutant& m, const std::string& text, int context = 1);

// Splits `text` into lines without their '\n' (a trailing newline adds no empty line).
std::vector<std::string> SourceLines(const std::string& text);

// Fills line/column/end_line/end_column from m.offset and m.original within `text`.
void LocateMutant(const std::string& text, Mutant* m);

}  // namespace mutation

#endif  // MUTATION_MUTANT_H_
