// How times and bytes read in the table and the warnings.
#include "number_format.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace paddle_prof::internal {
namespace {

TEST(NumberFormatTest, MillisecondsKeepSixDigitsAndNeverAnExponent) {
  EXPECT_EQ(FormatMs(0), "0");
  EXPECT_EQ(FormatMs(0.000021), "0.000021");  // %g: 2.1e-05
  EXPECT_EQ(FormatMs(12.345649), "12.3456");
  EXPECT_EQ(FormatMs(1234.5678), "1234.57");
  EXPECT_EQ(FormatMs(999999), "999999");
  EXPECT_EQ(FormatMs(1234567.8), "1234568");  // %g: 1.23457e+06, a 20-minute window
}

TEST(NumberFormatTest, BytesTakeTheUnitTheyRoundTo) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(3136000), "2.99 MiB");
  EXPECT_EQ(FormatBytes((int64_t{1} << 20) - 1), "1.00 MiB");  // not "1024.00 KiB"
  EXPECT_EQ(FormatBytes((int64_t{1} << 30) - 2048), "1.00 GiB");
  EXPECT_EQ(FormatBytes((int64_t{1} << 30) - (int64_t{6} << 20)), "1018.00 MiB");
  EXPECT_EQ(FormatBytes(-2048), "-2.00 KiB");
  EXPECT_EQ(FormatBytes(int64_t{2048} << 40), "2048.00 TiB");  // no unit past TiB
}

TEST(NumberFormatTest, ByteCountsKeepEveryByte) {
  EXPECT_EQ(FormatByteCount(0), "0 bytes");
  EXPECT_EQ(FormatByteCount(999), "999 bytes");
  EXPECT_EQ(FormatByteCount(3136000), "3,136,000 bytes");
  EXPECT_EQ(FormatByteCount(-1234567), "-1,234,567 bytes");
  EXPECT_EQ(FormatByteCount(-123), "-123 bytes");
}

TEST(NumberFormatTest, FixedDecimals) {
  EXPECT_EQ(FormatFixed(1.5, 3), "1.500");
  EXPECT_EQ(FormatFixed(12.345, 2), "12.35");  // as the table's ratio column
  EXPECT_EQ(FormatFixed(-0.0004, 3), "-0.000");
}

}  // namespace
}  // namespace paddle_prof::internal
