// The text table's event column, short enough for a terminal: the full names and tags
// stay in the files, the table shows what tells its rows apart.
//   aten::empty [[64, 16, 28, 28], [], [], [], [], []]   ->  aten::empty [[64, 16, 28, 28]]
//   aten::mkldnn_convolution [[1, 16, 41, 32], [16, 16, 3, 3], [0], [1, 1], ...]
//                                               ->  aten::mkldnn_convolution [[1, 16, 41, 32], …]
#ifndef PADDLE_PROF_SRC_TABLE_LABELS_H_
#define PADDLE_PROF_SRC_TABLE_LABELS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// A shape tag ("[[64, 16], [], []]", as record_shapes writes them) without its trailing
// empty arguments: "[[64, 16]]", and "" when every argument is empty ("[]" too). Any other tag is
// returned as it is.
std::string TrimShapeTag(const std::string& tag);

// Shape tags with the arguments they all share read as "…", so that a list of them says
// only what differs: {"[[1, 41], [16, 3]]", "[[1, 60], [16, 3]]"} -> "[[1, 41], …]",
// "[[1, 60], …]". Tags of another form (one shape, "[1, 3, 41, 32]", reads whole), or
// of other argument counts, stay whole.
std::vector<std::string> TellApart(const std::vector<std::string>& tags);

// The labels of `rows` (RowLabel's, escaped), each at most `width` characters (0: no
// limit), as told apart as the width allows:
//   1. shape tags lose their trailing empty arguments, unless two rows would then read
//      the same;
//   2. a label still too wide shows only the arguments (each a list) its name's rows differ in, and
//      of the others as many from the left as fit, the rest as "…";
//   3. one still too wide drops the spaces in its tag;
//   4. one still too wide keeps its start and its end, cut in between by "…".
std::vector<std::string> FitRowLabels(const std::vector<const EventRow*>& rows, size_t width);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_TABLE_LABELS_H_
