// The curated catalog: hand-written boundary mutants kept in mutation/catalog.json, and the score
// thresholds (the one place they live). Thread-compatible; pure apart from the file reader.
#ifndef MUTATION_CATALOG_H_
#define MUTATION_CATALOG_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mutation/mutant.h"

namespace mutation {

// Mutation scores in percent, as in mutation-testing-elements: >= high is good, < low is poor, and
// a generated score below `break_at` fails the run (Stryker's `break`).
struct Thresholds {
  int high = 80;
  int low = 60;
  int break_at = 50;
};

struct CatalogEntry {
  std::string id;
  std::string file;
  std::string original;     // must occur exactly once in `file`
  std::string replacement;  // what the snippet becomes
  std::string boundary;     // the boundary attacked, e.g. "process: group kill"
  std::string why;          // what a survivor would mean
};

struct Catalog {
  Thresholds thresholds;
  std::vector<CatalogEntry> entries;
};

// Parses the catalog's JSON text. InvalidArgument naming the entry and field on any defect: a
// missing or empty field, a duplicate id, replacement equal to original, bad thresholds.
absl::StatusOr<Catalog> ParseCatalog(const std::string& json_text);

// Reads a repository file by relative path; NotFound when it does not exist.
using FileReader = std::function<absl::StatusOr<std::string>(const std::string& path)>;

// Turns every entry into a located Mutant. InvalidArgument listing EVERY entry whose snippet does
// not occur exactly once (zero: the code moved on, the entry must follow; twice: ambiguous) or
// whose file is missing; the catalog must follow the code, so nothing runs until it does.
absl::StatusOr<std::vector<Mutant>> ResolveCatalog(const Catalog& catalog, const FileReader& read);

// Occurrences of `needle` in `haystack`, overlapping ones included.
int CountOccurrences(const std::string& haystack, const std::string& needle);

}  // namespace mutation

#endif  // MUTATION_CATALOG_H_
