// Generated mutants: a small C++ lexer that knows where code is (not comments, string or character
// literals, raw strings, preprocessor lines), and six operators applied to the code it finds.
// Pure functions over text; thread-compatible.
#ifndef MUTATION_GENERATE_H_
#define MUTATION_GENERATE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mutation/mutant.h"

namespace mutation {

// The operators, by the names used in ids and reports.
inline constexpr const char* kRelational = "RelationalOperator";  // < <= > >= == !=
inline constexpr const char* kLogical = "LogicalOperator";        // && <-> ||
inline constexpr const char* kNegateCondition = "NegateCondition"; // if (c) -> if (!(c))
inline constexpr const char* kReturnValue = "ReturnValue";         // true<->false, 0<->1, OkStatus
inline constexpr const char* kDeleteCall = "DeleteCall";           // `f(x);` -> ``
inline constexpr const char* kConstantPlus = "ConstantPlusOne";    // N -> N+1
inline constexpr const char* kConstantMinus = "ConstantMinusOne";  // N -> N-1

// The marker that excludes a line: `// mutation: skip(reason)`. The reason is required.
inline constexpr const char* kSkipMarker = "mutation: skip";
// The marker that excludes a whole file, on a comment line of its own anywhere in it:
// `// mutation: skip-file(reason)`, for test support that lives in a file of its own (a harness, a
// helper binary) and is a judge, not the judged. The reason is required.
inline constexpr const char* kSkipFileMarker = "mutation: skip-file";

// For every byte of `text`, whether it is code the generator may mutate: false inside comments,
// string/char/raw-string literals and preprocessor lines (with their continuations).
std::vector<bool> CodeMask(const std::string& text);

// The interior [begin, end) of each `if (...)` / `while (...)` condition of one line's code that
// lies wholly on the line and has no init-statement: NegateCondition's sites, and the schema's
// condition sites.
std::vector<std::pair<std::size_t, std::size_t>> OneLineConditions(const std::string& code);

// The reason of `text`'s skip-file marker; "" when it has none. InvalidArgument naming the line when
// the marker has no reason.
absl::StatusOr<std::string> SkipFileReason(const std::string& path, const std::string& text);

// Every generated mutant of `text`, which is the content of repository file `path`, in order of
// position. Ids are "path:line:operator:index", index counting that operator's sites on that line.
// None for a file with a skip-file marker, whose reason goes to `*skip_file_reason` (left empty
// otherwise) when given. InvalidArgument when a skip or skip-file marker has no reason (the marker
// must say why).
absl::StatusOr<std::vector<Mutant>> GenerateMutants(const std::string& path,
                                                    const std::string& text,
                                                    std::string* skip_file_reason = nullptr);

// Whether `path` is a source the generator covers: a .cc file that is not a test or test support
// (a name containing `_test` or `testing`, or starting with `test`), a benchmark or fuzzer
// (`*_bench*`, `*_fuzz*`), nor under a testdata/ directory.
bool IsGeneratedSource(const std::string& path);

}  // namespace mutation

#endif  // MUTATION_GENERATE_H_
