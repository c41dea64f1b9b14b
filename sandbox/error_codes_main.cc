// Prints the error table as JSON lines, one code a line: the contract between the sandbox, the
// agent's envelope and anyone scripting against either.
#include <cstdio>

#include "nlohmann/json.hpp"
#include "sandbox/errors.h"

int main() {
  for (const sandbox::ErrorInfo& row : sandbox::AllErrors()) {
    nlohmann::json j = {
        {"code", row.name},
        {"retryable", row.retryable},
        {"suggested_action", row.suggested_action},
        {"meaning", row.meaning},
    };
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}
