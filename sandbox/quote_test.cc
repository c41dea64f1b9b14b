#include "sandbox/quote.h"

#include <string>

#include "gtest/gtest.h"

namespace sandbox {
namespace {

TEST(QuoteTest, PlainTextIsWrappedInSingleQuotes) {
  EXPECT_EQ(Quote("../secret.txt"), "'../secret.txt'");
}

TEST(QuoteTest, EscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(Quote("it's"), "'it\\'s'");
  EXPECT_EQ(Quote("a\\b"), "'a\\\\b'");
  EXPECT_EQ(Quote(std::string("a\0b", 3)), "'a\\x00b'");
  EXPECT_EQ(Quote("a\nb\tc\x7f"), "'a\\nb\\tc\\x7f'");
}

TEST(QuoteTest, KeepsValidUtf8AndEscapesInvalidBytes) {
  EXPECT_EQ(Quote("\xe6\x96\x87\xe4\xbb\xb6.txt"), "'\xe6\x96\x87\xe4\xbb\xb6.txt'");
  EXPECT_EQ(Quote("\xff\xfe.txt"), "'\\xff\\xfe.txt'");
  EXPECT_EQ(Quote("\xc0\xaf"), "'\\xc0\\xaf'");          // Overlong '/'.
  EXPECT_EQ(Quote("\xed\xa0\x80"), "'\\xed\\xa0\\x80'");  // A surrogate.
  EXPECT_EQ(Quote("\xe6\x96"), "'\\xe6\\x96'");          // Cut short.
}

TEST(QuoteTest, CutsLongInput) {
  EXPECT_EQ(Quote(std::string(10, 'a'), 4), "'aaaa'...");
  EXPECT_EQ(Quote(std::string(4, 'a'), 4), "'aaaa'");
}

}  // namespace
}  // namespace sandbox
