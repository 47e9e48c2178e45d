#include "number_format.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace paddle_prof::internal {

std::string FormatMs(double ms) {
  char buf[64];
  // %g would write 2.1e-05 below a microsecond and 1.23457e+06 from 1,000 s on: fixed
  // decimals read better at both ends.
  const char* format = ms != 0 && ms < 0.001 ? "%.6f" : ms >= 1e6 ? "%.0f" : "%.6g";
  std::snprintf(buf, sizeof(buf), format, ms);
  return buf;
}

std::string FormatFixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string FormatBytes(int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  constexpr size_t kLargest = std::size(kUnits) - 1;
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  // 1023.996 KiB would print as "1024.00 KiB": it is the next unit's 1.00.
  while (std::abs(value) >= (unit == 0 ? 1024 : 1023.995) && unit < kLargest) {
    value /= 1024;
    ++unit;
  }
  return FormatFixed(value, unit == 0 ? 0 : 2) + " " + kUnits[unit];
}

namespace {

// Thousands separators in the whole part of "1234567.8": "1,234,567.8".
std::string Grouped(std::string number) {
  const int sign = number[0] == '-' ? 1 : 0;
  const size_t point = number.find('.');
  const int whole_end = static_cast<int>(point == std::string::npos ? number.size() : point);
  for (int i = whole_end - 3; i > sign; i -= 3) number.insert(static_cast<size_t>(i), ",");
  return number;
}

}  // namespace

std::string FormatGrouped(double value, int decimals) {
  return Grouped(FormatFixed(value, decimals));
}
std::string FormatByteCount(int64_t bytes) { return Grouped(std::to_string(bytes)) + " bytes"; }
std::string FormatUnsignedByteCount(uint64_t bytes) {
  return Grouped(std::to_string(bytes)) + " bytes";
}

}  // namespace paddle_prof::internal
