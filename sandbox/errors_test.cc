#include "sandbox/errors.h"

#include <cerrno>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace sandbox {
namespace {

TEST(ErrorTableTest, EveryCodeHasExactlyOneRowInOrder) {
  std::set<std::string> names;
  int index = 0;
  for (const ErrorInfo& row : AllErrors()) {
    EXPECT_EQ(static_cast<int>(row.code), index) << row.name;
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << "duplicate name " << row.name;
    EXPECT_FALSE(row.suggested_action.empty()) << row.name;
    ++index;
  }
  EXPECT_EQ(index, static_cast<int>(ErrorCode::kEINTERNAL) + 1);
}

TEST(ErrorTableTest, RetryabilityFollowsTheSeed) {
  // Policy denial and bad arguments must never be retried; transient failures may be.
  EXPECT_FALSE(Info(ErrorCode::kEPERM).retryable);
  EXPECT_EQ(Info(ErrorCode::kEPERM).suggested_action, "stop");
  EXPECT_FALSE(Info(ErrorCode::kEINVAL).retryable);
  EXPECT_EQ(Info(ErrorCode::kEINVAL).suggested_action, "fix_args");
  EXPECT_TRUE(Info(ErrorCode::kETRANSIENT).retryable);
  EXPECT_EQ(Info(ErrorCode::kETRANSIENT).suggested_action, "retry");
  EXPECT_EQ(Info(ErrorCode::kEFBIG).suggested_action, "read_range");
  EXPECT_FALSE(Info(ErrorCode::kEBUDGET).retryable);
}

TEST(ErrorTableTest, CodeSurvivesTheStatusRoundTrip) {
  for (const ErrorInfo& row : AllErrors()) {
    absl::Status s = MakeError(row.code, "message");
    EXPECT_EQ(s.code(), row.status_code) << row.name;
    EXPECT_EQ(CodeOf(s), row.code) << row.name;
    EXPECT_EQ(s.message(), "message");
  }
}

TEST(ErrorTableTest, PlainStatusIsClassifiedByItsCode) {
  EXPECT_EQ(CodeOf(absl::PermissionDeniedError("x")), ErrorCode::kEPERM);
  EXPECT_EQ(CodeOf(absl::NotFoundError("x")), ErrorCode::kENOENT);
  EXPECT_EQ(CodeOf(absl::DeadlineExceededError("x")), ErrorCode::kETIMEDOUT);
  EXPECT_EQ(CodeOf(absl::UnavailableError("x")), ErrorCode::kETRANSIENT);
  EXPECT_EQ(CodeOf(absl::UnknownError("x")), ErrorCode::kEINTERNAL);
}

TEST(ErrorTableTest, ParseRejectsUnknownNames) {
  EXPECT_EQ(*ParseErrorCode("EFBIG"), ErrorCode::kEFBIG);
  EXPECT_FALSE(ParseErrorCode("efbig").ok());
  EXPECT_FALSE(ParseErrorCode("").ok());
}

TEST(ErrnoErrorTest, MapsErrnoAndKeepsTheCallInTheMessage) {
  absl::Status s = ErrnoError(ELOOP, "openat2(a/b)");
  EXPECT_EQ(CodeOf(s), ErrorCode::kEPERM);
  EXPECT_EQ(std::string(s.message()).rfind("openat2(a/b): ", 0), 0u) << s.message();
  EXPECT_EQ(CodeOf(ErrnoError(ENOENT, "x")), ErrorCode::kENOENT);
  EXPECT_EQ(CodeOf(ErrnoError(EMFILE, "x")), ErrorCode::kETRANSIENT);
  EXPECT_EQ(CodeOf(ErrnoError(EFBIG, "x")), ErrorCode::kEFBIG);
  EXPECT_EQ(CodeOf(ErrnoError(EIO, "x")), ErrorCode::kEIO);
}

}  // namespace
}  // namespace sandbox
