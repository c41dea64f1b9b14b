// Early-return helpers for absl::Status. Abseil 20220623 ships neither RETURN_IF_ERROR nor
// ASSIGN_OR_RETURN, so the project defines them once, here.
#ifndef SANDBOX_STATUS_MACROS_H_
#define SANDBOX_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SB_STATUS_CONCAT_INNER_(a, b) a##b
#define SB_STATUS_CONCAT_(a, b) SB_STATUS_CONCAT_INNER_(a, b)

// Returns `expr`'s Status from the calling function if it is not OK.
#define SB_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status sb_status_ = (expr);           \
    if (!sb_status_.ok()) return sb_status_;      \
  } while (0)

// `lhs = value of expr`, or return its Status from the calling function.
#define SB_ASSIGN_OR_RETURN(lhs, expr) \
  SB_ASSIGN_OR_RETURN_IMPL_(SB_STATUS_CONCAT_(sb_statusor_, __LINE__), lhs, expr)

#define SB_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

#endif  // SANDBOX_STATUS_MACROS_H_
