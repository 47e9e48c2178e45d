// How numbers read in the table and in warnings, in one place: times in milliseconds,
// bytes for the eye ("2.99 MiB") or to the byte ("3,136,000 bytes"). The JSON and the
// trace keep raw numbers and do not come here.
#ifndef PADDLE_PROF_SRC_NUMBER_FORMAT_H_
#define PADDLE_PROF_SRC_NUMBER_FORMAT_H_

#include <cstdint>
#include <string>

namespace paddle_prof::internal {

// Six significant digits, never an exponent: "0.000021", "12.3456", "1234.57", and
// whole milliseconds from 1,000 s on: "1234568".
std::string FormatMs(double ms);
// `value` with `decimals` digits after the point: "1.500".
std::string FormatFixed(double value, int decimals);
// The same, thousands separated: "2,345.6".
std::string FormatGrouped(double value, int decimals);
// Binary units with two decimals, whole bytes below 1 KiB: "2.99 MiB", "512 B".
std::string FormatBytes(int64_t bytes);
// Every byte, thousands separated: "3,136,000 bytes".
std::string FormatByteCount(int64_t bytes);
std::string FormatUnsignedByteCount(uint64_t bytes);  // a request no block can serve too

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_NUMBER_FORMAT_H_
