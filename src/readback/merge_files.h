// Summary files merged as they are read: python3 -m paddle_prof merge, and
// paddle_prof.merge() over paths. A thousand ranks' summaries take seconds to read (JSON),
// so they are read on every core, a few at a time, and each is folded into the merge in
// input order as soon as it is read: memory holds the merged rows, a few whole inputs and
// the rest of the others (their places, steps, timelines), never every input's rows.
//
//   Report merged = MergeSummaryFiles({"rank0.json.summary.json", ...}, EventSortingKey::kTotal);
#ifndef PADDLE_PROF_SRC_MERGE_FILES_H_
#define PADDLE_PROF_SRC_MERGE_FILES_H_

#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// MergeReports() of the summaries at `paths`, read on up to `threads` threads (0: one per
// core, at most 8). std::invalid_argument as LoadSummary() and MergeReports() give, for
// the first input in order that has one.
Report MergeSummaryFiles(const std::vector<std::string>& paths, EventSortingKey key,
                         unsigned threads = 0);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MERGE_FILES_H_
