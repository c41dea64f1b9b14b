// The one error table shared by the sandbox and the agent's result envelope.
//
// Every failure that crosses a boundary carries a stable code (EPERM, ENOENT, ...), a message a human
// can act on, whether retrying can help, and what the caller should do next. The table below is the
// only place those three facts are decided; call sites name a code and write a message, nothing else.
//
// Codes travel inside absl::Status as a payload, so library code keeps returning absl::Status and the
// agent can rebuild the code without parsing text. A Status without the payload (from a library we
// call) is classified by its absl::StatusCode.
//
// Thread-safety: everything here is immutable or pure; safe from any thread. Not async-signal-safe.
#ifndef SANDBOX_ERRORS_H_
#define SANDBOX_ERRORS_H_

#include <span>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sandbox {

enum class ErrorCode {
  kEPERM,          // Policy denial: the boundary said no.
  kENOENT,         // The named thing does not exist.
  kEINVAL,         // Malformed arguments.
  kEFBIG,          // Too large to return whole.
  kENOMATCH,       // patch: the old text occurs nowhere.
  kEAMBIGUOUS,     // patch: the old text occurs more than once.
  kEPRECONDITION,  // A tool's precondition does not hold (e.g. finish before a passing test).
  kETIMEDOUT,      // A wall-clock deadline passed.
  kETRANSIENT,     // A passing condition (EAGAIN, EINTR, out of fds); trying again may work.
  kEBUDGET,        // A step or tool budget is spent.
  kEUNSUPPORTED,   // The platform or kernel lacks a required feature.
  kEIO,            // The operating system failed an operation for a reason not listed above.
  kEINTERNAL,      // A bug: an invariant of this program does not hold.
};

struct ErrorInfo {
  ErrorCode code;
  absl::string_view name;              // "EPERM": stable, part of the wire format.
  absl::StatusCode status_code;       // How the code travels as an absl::Status.
  bool retryable;                     // Can the same call succeed if simply repeated?
  absl::string_view suggested_action;  // What the caller should do next: "stop", "fix_args", ...
  absl::string_view meaning;           // One line for documentation and --help.
};

// Every code, in declaration order.
std::span<const ErrorInfo> AllErrors();

// The table row of `code`.
const ErrorInfo& Info(ErrorCode code);

// Looks a code up by its wire name ("EPERM"); NotFound for an unknown name.
absl::StatusOr<ErrorCode> ParseErrorCode(absl::string_view name);

// A Status carrying `code` as payload, with the absl::StatusCode of the table and `message`.
absl::Status MakeError(ErrorCode code, absl::string_view message);

// The code carried by `status`; for a Status without the payload, the code of its absl::StatusCode.
// Must not be called with an OK status (returns kEINTERNAL then).
ErrorCode CodeOf(const absl::Status& status);

// Classifies an errno value from a failed system call. `what` is the call as written, e.g.
// "openat2(src/main.cc)"; the message becomes "<what>: <strerror(err)>".
absl::Status ErrnoError(int err, absl::string_view what);

// The ErrorCode an errno value maps to (exposed for tests and for the runner's child reports).
ErrorCode ErrnoToCode(int err);

}  // namespace sandbox

#endif  // SANDBOX_ERRORS_H_
