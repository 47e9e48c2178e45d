// Lines of cells laid out in aligned columns, as every text table prints them.
#ifndef PADDLE_PROF_SRC_TEXT_COLUMNS_H_
#define PADDLE_PROF_SRC_TEXT_COLUMNS_H_

#include <string>
#include <vector>

namespace paddle_prof::internal {

// Each line's cells padded to their column's widest (by characters: cells are valid
// UTF-8 once escaped), two spaces apart, one line each.
std::string AlignColumns(const std::vector<std::vector<std::string>>& lines);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_TEXT_COLUMNS_H_
