#include "sandbox/errors.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace sandbox {
namespace {

// The payload key under which an ErrorCode's name travels in an absl::Status.
constexpr absl::string_view kPayloadKey = "type.sandbox/error_code";

using C = ErrorCode;
using S = absl::StatusCode;

// The table. Order follows the enum; a test checks that every code has exactly one row.
constexpr ErrorInfo kTable[] = {
    {C::kEPERM, "EPERM", S::kPermissionDenied, false, "stop",
     "the sandbox policy denied the operation"},
    {C::kENOENT, "ENOENT", S::kNotFound, false, "fix_args",
     "the named file, directory or program does not exist"},
    {C::kEINVAL, "EINVAL", S::kInvalidArgument, false, "fix_args",
     "the arguments are malformed"},
    {C::kEFBIG, "EFBIG", S::kOutOfRange, false, "read_range",
     "the result is too large to return whole; ask for a range"},
    {C::kENOMATCH, "ENOMATCH", S::kFailedPrecondition, false, "read_file",
     "the text to replace occurs nowhere; read the file again"},
    {C::kEAMBIGUOUS, "EAMBIGUOUS", S::kFailedPrecondition, false, "add_context",
     "the text to replace occurs more than once; include more context"},
    {C::kEPRECONDITION, "EPRECONDITION", S::kFailedPrecondition, false, "run_tests",
     "a precondition of the tool does not hold"},
    {C::kETIMEDOUT, "ETIMEDOUT", S::kDeadlineExceeded, true, "retry",
     "a wall-clock deadline passed"},
    {C::kETRANSIENT, "ETRANSIENT", S::kUnavailable, true, "retry",
     "a passing condition; the same call may succeed later"},
    {C::kEBUDGET, "EBUDGET", S::kResourceExhausted, false, "stop",
     "a step or tool-call budget is spent"},
    {C::kEUNSUPPORTED, "EUNSUPPORTED", S::kUnimplemented, false, "stop",
     "this platform or kernel lacks a required feature"},
    {C::kEIO, "EIO", S::kInternal, false, "report",
     "the operating system failed the operation"},
    {C::kEINTERNAL, "EINTERNAL", S::kInternal, false, "report",
     "an internal invariant does not hold (a bug)"},
};

}  // namespace

std::span<const ErrorInfo> AllErrors() { return kTable; }

const ErrorInfo& Info(ErrorCode code) {
  for (const ErrorInfo& row : kTable) {
    if (row.code == code) return row;
  }
  return kTable[std::size(kTable) - 1];  // kEINTERNAL: unreachable while the table is complete.
}

absl::StatusOr<ErrorCode> ParseErrorCode(absl::string_view name) {
  for (const ErrorInfo& row : kTable) {
    if (row.name == name) return row.code;
  }
  return absl::NotFoundError(absl::StrCat("unknown error code '", name, "'"));
}

absl::Status MakeError(ErrorCode code, absl::string_view message) {
  const ErrorInfo& info = Info(code);
  absl::Status status(info.status_code, message);
  status.SetPayload(kPayloadKey, absl::Cord(info.name));
  return status;
}

ErrorCode CodeOf(const absl::Status& status) {
  if (auto payload = status.GetPayload(kPayloadKey); payload.has_value()) {
    if (auto code = ParseErrorCode(std::string(*payload)); code.ok()) return *code;
  }
  switch (status.code()) {
    case S::kPermissionDenied: return C::kEPERM;
    case S::kNotFound: return C::kENOENT;
    case S::kInvalidArgument: return C::kEINVAL;
    case S::kOutOfRange: return C::kEFBIG;
    case S::kFailedPrecondition: return C::kEPRECONDITION;
    case S::kDeadlineExceeded: return C::kETIMEDOUT;
    case S::kUnavailable: return C::kETRANSIENT;
    case S::kResourceExhausted: return C::kEBUDGET;
    case S::kUnimplemented: return C::kEUNSUPPORTED;
    default: return C::kEINTERNAL;
  }
}

ErrorCode ErrnoToCode(int err) {
  switch (err) {
    case EPERM: case EACCES: case ELOOP: case EXDEV: case EROFS:
      return C::kEPERM;
    case ENOENT: case ENOTDIR:
      return C::kENOENT;
    case EINVAL: case ENAMETOOLONG: case EISDIR: case EBADF:
      return C::kEINVAL;
    case EFBIG:
      return C::kEFBIG;
    case ETIMEDOUT:
      return C::kETIMEDOUT;
    case EAGAIN: case EINTR: case EMFILE: case ENFILE: case ENOMEM: case EBUSY:
      return C::kETRANSIENT;
    case ENOSYS: case EOPNOTSUPP:
      return C::kEUNSUPPORTED;
    default:
      return C::kEIO;
  }
}

absl::Status ErrnoError(int err, absl::string_view what) {
  return MakeError(ErrnoToCode(err), absl::StrCat(what, ": ", std::strerror(err)));
}

}  // namespace sandbox
