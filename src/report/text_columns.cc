#include "text_columns.h"

#include <algorithm>

namespace paddle_prof::internal {
namespace {

size_t Width(const std::string& cell) {
  size_t width = 0;
  for (const char c : cell) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

}  // namespace

std::string AlignColumns(const std::vector<std::vector<std::string>>& lines) {
  std::vector<size_t> width;
  for (const auto& line : lines) {
    if (width.size() < line.size()) width.resize(line.size());
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], Width(line[i]));
  }
  std::string out;
  for (const auto& line : lines) {
    for (size_t i = 0; i < line.size(); ++i) {
      out += line[i];
      if (i + 1 < line.size()) out += std::string(width[i] - Width(line[i]) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace paddle_prof::internal
