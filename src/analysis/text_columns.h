// Lines of cells laid out in aligned columns, as every text table prints them.
#ifndef PADDLE_PROF_SRC_TEXT_COLUMNS_H_
#define PADDLE_PROF_SRC_TEXT_COLUMNS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace paddle_prof::internal {

// Characters in `text` (valid UTF-8): the columns it takes.
size_t TextWidth(const std::string& text);

// Each line's cells padded to their column's widest (by characters: cells are valid
// UTF-8 once escaped), two spaces apart, one line each.
std::string AlignColumns(const std::vector<std::vector<std::string>>& lines);

// `text` (one line, valid UTF-8) as lines of at most `width` characters (0: one line),
// broken at spaces outside brackets (a shape stays whole), the first starting with
// `first`, the others with `rest`; a word wider than a line is broken where the line
// ends. Each line ends in a newline.
std::string WrapText(const std::string& text, size_t width, const std::string& first,
                     const std::string& rest);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_TEXT_COLUMNS_H_
