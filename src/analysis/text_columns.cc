#include "text_columns.h"

#include <algorithm>

namespace paddle_prof::internal {

namespace {

// Whether the space at `at` comes before a unit ("KiB", "ms", ...), ending a word there.
bool BeforeUnit(const std::string& text, size_t at) {
  size_t end = text.find(' ', at + 1);
  if (end == std::string::npos) end = text.size();
  std::string word = text.substr(at + 1, end - at - 1);
  while (!word.empty() && (word.back() == ',' || word.back() == ';' || word.back() == ')' ||
                           word.back() == '.')) {
    word.pop_back();
  }
  for (const char* unit : {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ms", "\u00b5s"}) {
    if (word == unit) return true;
  }
  return false;
}

}  // namespace

size_t TextWidth(const std::string& text) {
  size_t width = 0;
  for (const char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& lines) {
  std::vector<size_t> width;
  for (const auto& line : lines) {
    if (width.size() < line.size()) width.resize(line.size());
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], TextWidth(line[i]));
  }
  std::string out;
  for (const auto& line : lines) {
    for (size_t i = 0; i < line.size(); ++i) {
      out += line[i];
      if (i + 1 < line.size()) out += std::string(width[i] - TextWidth(line[i]) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

std::string WrapText(const std::string& text, size_t width, const std::string& first,
                     const std::string& rest) {
  if (width == 0) return first + text + "\n";
  std::string out;
  std::string line = first;
  size_t used = TextWidth(first);
  bool empty = true;  // no word on `line` yet
  size_t i = 0;
  while (i < text.size()) {
    // A word ends at a space outside brackets and not before a unit: a shape
    // ("[1, 16, 41, 32]") and a figure ("1.00 MiB") stay whole.
    size_t end = i;
    for (int depth = 0; end < text.size() && (text[end] != ' ' || depth > 0 || BeforeUnit(text, end));
         ++end) {
      depth += text[end] == '[' ? 1 : text[end] == ']' && depth > 0 ? -1 : 0;
    }
    std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    size_t w = TextWidth(word);
    if (!empty && used + 1 + w > width) {
      out += line + "\n";
      line = rest;
      used = TextWidth(rest);
      empty = true;
    }
    // A word no line holds: what fits here, the rest on the next lines.
    while (used + (empty ? 0 : 1) + w > width && w > 1) {
      const size_t room = width > used + (empty ? 0 : 1) ? width - used - (empty ? 0 : 1) : 0;
      if (room == 0) {
        out += line + "\n";
        line = rest;
        used = TextWidth(rest);
        empty = true;
        if (used >= width) break;  // an indent as wide as the line: give up breaking
        continue;
      }
      size_t cut = 0, chars = 0;
      while (cut < word.size() && chars < room) {
        ++cut;
        while (cut < word.size() && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) ++cut;
        ++chars;
      }
      line += (empty ? "" : " ") + word.substr(0, cut);
      out += line + "\n";
      line = rest;
      used = TextWidth(rest);
      empty = true;
      word = word.substr(cut);
      w = TextWidth(word);
    }
    line += (empty ? "" : " ") + word;
    used += (empty ? 0 : 1) + w;
    empty = false;
  }
  return out + line + "\n";
}

}  // namespace paddle_prof::internal
