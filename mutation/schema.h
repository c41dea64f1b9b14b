// Mutant schemata (Untch, Offutt and Harrold, 1993; what Mull and Stryker do): every generated
// mutant of a file is compiled into ONE copy of the file, each behind a runtime switch, so a file
// is built once instead of once per mutant. A site's original span S with variants V1..Vn becomes
//
//   (mutation_schema::On(7) ? (V1) : mutation_schema::On(8) ? (V2) : (S))
//
// and a deleted call statement `f(x);` becomes `if (mutation_schema::On(9)) {} else { f(x); }`.
// On(id) is true only in a process whose MUTATION_ACTIVE is id, and records that the site was
// reached in the MUTATION_COVERAGE map, which tells which tests can see which mutant at all.
//
// Every replacement stays on its line and a `#line 1` follows the prelude, so the compiler's
// diagnostics name the original lines: a site that does not compile (a literal that must be a
// constant expression, a move-only return value) is found from the errors and left to the
// classic one-build-per-mutant path (`BlamedLines`, then `BuildSchema` again without it).
//
// Pure functions over text; thread-compatible.
#ifndef MUTATION_SCHEMA_H_
#define MUTATION_SCHEMA_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "mutation/mutant.h"

namespace mutation {

// The environment variables the schema runtime reads.
inline constexpr char kActiveEnv[] = "MUTATION_ACTIVE";      // the one switch that is on
inline constexpr char kCoverageEnv[] = "MUTATION_COVERAGE";  // a file, one byte per switch id

// A switch id at the top of a function body (never switched on, only recorded in coverage): the
// tests that enter the function, the only ones that can reach any line of it.
struct FunctionProbe {
  int id = 0;
  int first_line = 0;  // the line of the body's `{`
  int last_line = 0;   // the line of its `}`
};

struct Schema {
  std::string text;                  // the file to compile in place of the original
  std::vector<std::size_t> embedded;  // indices into the mutants: switched at run time
  // Indices of mutants that need a build of their own, each with why.
  std::vector<std::pair<std::size_t, std::string>> fallback;
  std::vector<FunctionProbe> probes;  // ids first_probe_id, first_probe_id + 1, ...
};

// The schema of `text` (the content of `path`) for `mutants` (generated mutants of that file);
// mutants[i] gets the switch ids[i] (>= 1, unique across every file of the run). Lines in
// `excluded_lines` (1-based) are left as written, their mutants fall back and they get no probe.
// Function probes take ids from first_probe_id on (0: no probes).
Schema BuildSchema(const std::string& path, const std::string& text,
                   const std::vector<Mutant>& mutants, const std::vector<int>& ids,
                   const std::set<int>& excluded_lines, int first_probe_id = 0);

// The lines of `path` a compiler's output blames: every `path:LINE:` in errors, notes and
// "required from here" lines. Only lines cited in a diagnostic block that contains an error or a
// warning turned error are returned.
std::set<int> BlamedLines(const std::string& compiler_output, const std::string& path);

// The schema text with line `line` (1-based, counted in the ORIGINAL file) replaced by
// `replacement`: how a mutant that cannot be switched is built on top of the schema of its file,
// so the rest of the build stays the same. Returns false when the line does not exist.
bool ReplaceSchemaLine(const std::string& schema_text, int line, const std::string& replacement,
                       std::string* out);

}  // namespace mutation

#endif  // MUTATION_SCHEMA_H_
