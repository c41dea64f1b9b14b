// A JSON Schema subset for tool inputs (draft 7 semantics).
//
// Supported keywords: type, properties, required, additionalProperties, enum, const, minLength,
// maxLength (in Unicode code points), pattern (RE2, unanchored search, as JSON Schema specifies),
// minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft 7: numbers), items (one schema or a
// tuple of schemas), minItems, maxItems; boolean schemas (true / false). The annotations $schema,
// $comment, title, description, default and examples are accepted and ignored.
//
// Anything else fails closed: CheckSchema rejects a schema using an unsupported keyword, so a tool
// author never believes a constraint is enforced when it is not. Validation errors name the failing
// location of the instance in `$`-notation (`$.path`, `$.items[2]`, `$["odd key"]`).
//
// Thread-safety: all functions are pure and may be called concurrently.
#ifndef AGENT_SCHEMA_H_
#define AGENT_SCHEMA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace agent {

struct SchemaViolation {
  std::string path;     // Where in the instance, e.g. "$.path".
  std::string message;  // What is wrong there, e.g. "must be a string (got integer)".
};

// Whether `schema` uses only the supported keywords, with well-formed values (a compilable pattern,
// non-negative lengths, ...). InvalidArgument naming the schema location otherwise.
absl::Status CheckSchema(const nlohmann::json& schema);

// Whether `keyword` is one this validator enforces or may ignore (for the test-suite filter).
bool IsSupportedKeyword(const std::string& keyword);

// Every violation of `schema` by `instance` (empty when valid), at most `max_violations`. The schema
// is assumed to have passed CheckSchema; an unsupported keyword met here is reported as a violation
// rather than ignored.
std::vector<SchemaViolation> Validate(const nlohmann::json& schema, const nlohmann::json& instance,
                                      size_t max_violations = 16);

// "$.a: must be a string (got integer); $.b: ..." for messages.
std::string FormatViolations(const std::vector<SchemaViolation>& violations);

}  // namespace agent

#endif  // AGENT_SCHEMA_H_
