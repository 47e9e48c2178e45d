#include "number_format.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace paddle_prof::internal {

std::string FormatMs(double ms) {
  char buf[32];
  // %g would write 2.1e-05: below a microsecond, fixed decimals read better.
  std::snprintf(buf, sizeof(buf), ms != 0 && ms < 0.001 ? "%.6f" : "%.6g", ms);
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
  while (std::abs(value) >= 1024 && unit < kLargest) {
    value /= 1024;
    ++unit;
  }
  return FormatFixed(value, unit == 0 ? 0 : 2) + " " + kUnits[unit];
}

std::string FormatByteCount(int64_t bytes) {
  std::string digits = std::to_string(bytes);
  for (int i = static_cast<int>(digits.size()) - 3; i > (bytes < 0 ? 1 : 0); i -= 3) {
    digits.insert(static_cast<size_t>(i), ",");
  }
  return digits + " bytes";
}

}  // namespace paddle_prof::internal
