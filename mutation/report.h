// Reports of a run: the mutation-testing-elements JSON (schemaVersion "1", the schema Stryker's
// report viewer reads), a self-contained HTML page (no network loads), and the terminal summary.
// Pure functions of their inputs; thread-compatible.
#ifndef MUTATION_REPORT_H_
#define MUTATION_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "mutation/catalog.h"
#include "mutation/mutant.h"
#include "nlohmann/json.hpp"

namespace mutation {

struct Score {
  int killed = 0, survived = 0, timeout = 0, no_coverage = 0, compile_error = 0,
      runtime_error = 0, pending = 0, ignored = 0;
  int detected() const { return killed + timeout; }
  int valid() const { return killed + timeout + survived + no_coverage; }
  // Detected / valid in percent (Stryker's mutation score); 100 when nothing is valid.
  double percent() const { return valid() == 0 ? 100.0 : 100.0 * detected() / valid(); }
};

Score ScoreOf(const std::vector<Mutant>& mutants, bool curated);

// `sources` maps each file with mutants to its (original) content.
nlohmann::json JsonReport(const std::vector<Mutant>& mutants,
                          const std::map<std::string, std::string>& sources,
                          const Thresholds& thresholds);

std::string HtmlReport(const std::vector<Mutant>& mutants,
                       const std::map<std::string, std::string>& sources,
                       const Thresholds& thresholds);

// Every mutant that was not caught (curated ones with boundary and why), with file:line, its diff
// and the tests that ran; then the counts and scores.
std::string TerminalSummary(const std::vector<Mutant>& mutants,
                            const std::map<std::string, std::string>& sources,
                            const Thresholds& thresholds);

}  // namespace mutation

#endif  // MUTATION_REPORT_H_
