// Reading names as UTF-8: invalid sequences by the maximal-subpart rule, the interned
// NUL, and the escapes of the text table.
#include "text_escape.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace paddle_prof::internal {
namespace {

// What DecodeUtf8 reads from `s`, code point by code point, as "value/length" pairs.
std::string Decoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const CodePoint cp = DecodeUtf8(std::string_view(s).substr(i));
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%s%X/%zu", out.empty() ? "" : " ",
                  static_cast<unsigned>(cp.value), cp.length);
    out += buf;
    i += cp.length;
  }
  return out;
}

TEST(TextEscapeTest, ValidSequencesDecodeToTheirCodePoints) {
  EXPECT_EQ(Decoded("a\x7F"), "61/1 7F/1");
  EXPECT_EQ(Decoded("\xC2\x80\xDF\xBF"), "80/2 7FF/2");
  EXPECT_EQ(Decoded("\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"),
            "800/3 D7FF/3 E000/3 FFFF/3");
  EXPECT_EQ(Decoded("\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"), "10000/4 10FFFF/4");
  EXPECT_EQ(Decoded(std::string("\0", 1)), "0/1");
}

// The lengths are those of Python's bytes.decode('utf-8', 'replace'): one U+FFFD per
// maximal subpart of a well-formed sequence, or per byte that starts none.
TEST(TextEscapeTest, InvalidSequencesReadAsOneReplacementPerMaximalSubpart) {
  EXPECT_EQ(Decoded("\xFF"), "FFFD/1");
  EXPECT_EQ(Decoded("\x80\xBF"), "FFFD/1 FFFD/1");  // stray continuations
  EXPECT_EQ(Decoded("\xE4\xB8"), "FFFD/2");         // cut short at the end
  EXPECT_EQ(Decoded("\xE1\x80"
                    "A"),
            "FFFD/2 41/1");                                               // cut short before ASCII
  EXPECT_EQ(Decoded("\xF0\x9F\x98"), "FFFD/3");                           // a cut emoji
  EXPECT_EQ(Decoded("\xE0\x80\xAF"), "FFFD/1 FFFD/1 FFFD/1");             // overlong
  EXPECT_EQ(Decoded("\xC1\xBF"), "FFFD/1 FFFD/1");                        // overlong
  EXPECT_EQ(Decoded("\xED\xA0\x80"), "FFFD/1 FFFD/1 FFFD/1");             // a surrogate
  EXPECT_EQ(Decoded("\xF4\x90\x80\x80"), "FFFD/1 FFFD/1 FFFD/1 FFFD/1");  // past U+10FFFF
  EXPECT_EQ(Decoded("\xF8\x88"), "FFFD/1 FFFD/1");                        // no 5-byte forms
}

TEST(TextEscapeTest, InternedNulReadsAsNul) {
  EXPECT_EQ(Decoded("a\xC0\x80"
                    "b"),
            "61/1 0/2 62/1");
  EXPECT_EQ(Decoded("\xC0\x81"), "FFFD/1 FFFD/1");  // any other C0 stays invalid
  EXPECT_EQ(Decoded("\xC0"), "FFFD/1");
}

TEST(TextEscapeTest, AppendUtf8WritesEachLength) {
  std::string out;
  for (const char32_t cp : {U'A', U'\u00E9', U'\u20AC', U'\U0001F600'}) AppendUtf8(cp, &out);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST(TextEscapeTest, TableTextIsOneLineOfValidUtf8) {
  EXPECT_EQ(EscapeForTable(std::string("a\0b\xC0\x80"
                                       "c",
                                       6)),
            "a\\0b\\0c");
  EXPECT_EQ(EscapeForTable("two\nlines\r\tx"), "two\\nlines\\r\\tx");
  EXPECT_EQ(EscapeForTable("\x1B[31mred\x7F"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(EscapeForTable("nel\xC2\x85"
                           "ls\xE2\x80\xA8"
                           "ps\xE2\x80\xA9"),
            "nel\\x85ls\\u2028ps\\u2029");
  EXPECT_EQ(EscapeForTable("conv\xFF"
                           "2d\xE4\xB8"),
            "conv\xEF\xBF\xBD"
            "2d\xEF\xBF\xBD");
  // Printable text, backslashes included, is kept as it is.
  EXPECT_EQ(EscapeForTable("matmul [2, 3] \\ \xC3\xA9\xE2\x82\xAC \xEF\xBF\xBD"),
            "matmul [2, 3] \\ \xC3\xA9\xE2\x82\xAC \xEF\xBF\xBD");
}

}  // namespace
}  // namespace paddle_prof::internal
