// How a row, a place or a call path is named where people read it: the text table, the warnings that
// name a row (a merge's stragglers) and the summary's timeline keys.
// "pid1234::thread0::conv2d [32, 3, 224, 224]", "CUDA:0 (pid 1234)".
#ifndef PADDLE_PROF_SRC_ROW_LABEL_H_
#define PADDLE_PROF_SRC_ROW_LABEL_H_

#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// The row's process and thread (when it is split by them), name and tag, escaped
// (text_escape.h) so that a newline in a name cannot split a line.
std::string RowLabel(const EventRow& row);
// RowLabel's two parts: the process, thread and name; and the tag as it follows them
// (escaped, bracketed when it is not already).
std::string RowHead(const EventRow& row);
std::string TagText(const std::string& tag);

// The place's name, and once reports of several processes merge, its input ("CPU (rank 3)",
// "CPU (node2 pid 1)") or, for a child's place, its pid ("CPU (pid 1234)").
std::string PlaceLabel(const PlaceSummary& place);

// A call path (RowBytes::path), joined: "ConvolutionBackward0 > aten::empty".
std::string JoinPath(const std::vector<std::string>& path);

// The table's short form of a path: its last event, after the innermost one before it
// of another namespace (the text before the last "::"; for an ATen op, the autograd
// node, module or user scope around it), or after its parent when all share one.
std::string ShortPath(const std::vector<std::string>& path);


}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ROW_LABEL_H_
