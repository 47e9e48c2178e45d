// Rows of several reports folded into one (merges of ranks, a parent and its children):
// rows of the same name, tag, thread and process add up as the calls of one row do.
#ifndef PADDLE_PROF_SRC_ROW_MERGE_H_
#define PADDLE_PROF_SRC_ROW_MERGE_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// Calls, times and memory sum; min and max (CPU and GPU) are the extremes over rows
// with calls; a row's peak is the largest; GPU figures stay null while every row's are.
class RowMerger {
 public:
  // Adds `row`; returns the index in rows() of the row it merged into.
  size_t Add(const EventRow& row);
  // The merged rows in the order their keys first came; averages and ratios are the
  // first rows' until FinishMergedRows().
  std::vector<EventRow>& rows() { return rows_; }

 private:
  using Key = std::tuple<std::string, std::optional<std::string>, std::optional<int>,
                         std::optional<int64_t>>;
  std::map<Key, size_t> index_;
  std::vector<EventRow> rows_;
};

// Averages from the sums (kept within [min, max]), ratios from the self times, then the
// rows sorted by `key` (SortRows).
void FinishMergedRows(EventSortingKey key, std::vector<EventRow>* rows);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ROW_MERGE_H_
