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

// Every byte of `bytes` as a \xNN escape: what Quote prints for bytes that are not valid UTF-8.
std::string AllEscaped(const std::string& bytes) {
  std::string out;
  for (const char c : bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto b = static_cast<unsigned char>(c);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

// The edges of RFC 3629's table of well-formed sequences: the first and last code point of each
// length and lead byte, and one step past each edge. A file name on either side of an edge that the
// quoting gets wrong is either shown as mojibake or, worse, passes raw bytes the reader never sees.
TEST(QuoteTest, KeepsEveryWellFormedEdgeOfUtf8) {
  for (const std::string s : {
           "\xc2\x80",          // U+0080, the first two-byte code point.
           "\xdf\xbf",          // U+07FF, the last.
           "\xe0\xa0\x80",      // U+0800, the first three-byte one (E0 needs A0..BF next).
           "\xed\x9f\xbf",      // U+D7FF, just below the surrogates (ED needs 80..9F next).
           "\xee\x80\x80",      // U+E000, just above them.
           "\xef\xbf\xbf",      // U+FFFF, the last three-byte one.
           "\xf0\x90\x80\x80",  // U+10000, the first four-byte one (F0 needs 90..BF next).
           "\xf1\x80\x80\x80",  // U+40000.
           "\xf4\x8f\xbf\xbf",  // U+10FFFF, the last code point (F4 needs 80..8F next).
       }) {
    EXPECT_EQ(Quote(s), "'" + s + "'") << AllEscaped(s);
    EXPECT_TRUE(IsWellFormedUtf8(s)) << AllEscaped(s);
    EXPECT_TRUE(IsWellFormedUtf8("a" + s + "b")) << AllEscaped(s);
    EXPECT_EQ(Quote("a" + s + "b"), "'a" + s + "b'") << AllEscaped(s);
  }
}

TEST(QuoteTest, EscapesEveryIllFormedNeighbourOfThoseEdges) {
  for (const std::string s : {
           "\xc1\xbf",          // Overlong U+007F.
           "\xc2\x7f",          // Second byte below the continuation range.
           "\xc2\xc0",          // Second byte above it.
           "\xe0\x9f\xbf",      // Overlong U+07FF.
           "\xed\xa0\x80",      // U+D800, a surrogate.
           "\xe6\x96\x7f",      // Third byte below the continuation range.
           "\xe6\x96\xc0",      // Third byte above it.
           "\xf0\x8f\xbf\xbf",  // Overlong U+FFFF.
           "\xf4\x90\x80\x80",  // U+110000, past the last code point.
           "\xf5\x80\x80\x80",  // A lead byte that never starts a sequence.
           "\xf0\x90\x80",      // Cut short.
           "\xf0\x90\x80\xc0",  // Fourth byte above the continuation range.
           "\x80",              // A continuation byte on its own.
       }) {
    EXPECT_EQ(Quote(s), "'" + AllEscaped(s) + "'") << AllEscaped(s);
    EXPECT_FALSE(IsWellFormedUtf8(s)) << AllEscaped(s);
    EXPECT_FALSE(IsWellFormedUtf8("a" + s)) << AllEscaped(s);
  }
}

TEST(QuoteTest, SequenceLengthIsCountedFromAnyOffset) {
  const std::string s = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\x80";
  EXPECT_EQ(Utf8SequenceLength(s, 0), 1u);
  EXPECT_EQ(Utf8SequenceLength(s, 1), 2u);
  EXPECT_EQ(Utf8SequenceLength(s, 2), 0u);  // A continuation byte does not start a sequence.
  EXPECT_EQ(Utf8SequenceLength(s, 3), 3u);
  EXPECT_EQ(Utf8SequenceLength(s, 6), 4u);
  EXPECT_EQ(Utf8SequenceLength(s, 10), 0u);
  EXPECT_EQ(Utf8SequenceLength(s.substr(0, 9), 6), 0u);  // Cut short by the end of the text.
  EXPECT_EQ(Utf8SequenceLength(s.substr(0, 10), 6), 4u);  // Ending exactly at the end.
}

TEST(QuoteTest, AsciiAndEmptyTextAreWellFormed) {
  EXPECT_TRUE(IsWellFormedUtf8(""));
  EXPECT_TRUE(IsWellFormedUtf8(std::string("\0\x7f plain", 8)));
}

TEST(QuoteTest, PrintableAsciiIsKeptFromSpaceToTilde) {
  EXPECT_EQ(Quote(" ~"), "' ~'");
  EXPECT_EQ(Quote("\x1f"), "'\\x1f'");
}

TEST(QuoteTest, CutsLongInput) {
  EXPECT_EQ(Quote(std::string(10, 'a'), 4), "'aaaa'...");
  EXPECT_EQ(Quote("abcdefgh", 4), "'abcd'...");
  EXPECT_EQ(Quote(std::string(4, 'a'), 4), "'aaaa'");
}

}  // namespace
TEST(Utf8HeadTest, ShortTextIsWhole) {
  EXPECT_EQ(Utf8Head("abc", 3), "abc");
  EXPECT_EQ(Utf8Head("abc", 10), "abc");
  EXPECT_EQ(Utf8Head("", 0), "");
}

TEST(Utf8HeadTest, NeverSplitsACharacter) {
  const std::string s = "a\xe4\xb8\xad\xf0\x9f\x98\x80z";  // a, U+4E2D (3 bytes), U+1F600 (4), z
  EXPECT_EQ(Utf8Head(s, 0), "");
  EXPECT_EQ(Utf8Head(s, 1), "a");
  EXPECT_EQ(Utf8Head(s, 2), "a");
  EXPECT_EQ(Utf8Head(s, 3), "a");
  EXPECT_EQ(Utf8Head(s, 4), "a\xe4\xb8\xad");
  EXPECT_EQ(Utf8Head(s, 5), "a\xe4\xb8\xad");
  EXPECT_EQ(Utf8Head(s, 7), "a\xe4\xb8\xad") << "three continuation bytes backed off";
  EXPECT_EQ(Utf8Head(s, 8), "a\xe4\xb8\xad\xf0\x9f\x98\x80");
}

TEST(Utf8HeadTest, BytesThatAreNotUtf8StillCutNearTheLimit) {
  // A run of continuation bytes is no character: the cut backs off three at most, not to zero.
  const std::string junk(100, '\x80');
  EXPECT_EQ(Utf8Head(junk, 50).size(), 47u);
  EXPECT_EQ(Utf8Head("ab\x80\x80\x80\x80\x80", 6), "ab\x80");
}

}  // namespace sandbox
