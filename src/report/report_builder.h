// Turns a Collection into a Report: pairs each call with its children to get self
// time, folds calls into rows by (name, tag[, thread]), sorts, and words the warnings.
// It reads only the Collection (through record_cursor.h) and its options: no recorder,
// flag or registry.
#ifndef PADDLE_PROF_SRC_REPORT_BUILDER_H_
#define PADDLE_PROF_SRC_REPORT_BUILDER_H_

#include <cstdint>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"
#include "report_options.h"

namespace paddle_prof::internal {

Report BuildReport(const Collection& collection, const ReportOptions& options);

// Largest first by `key` (sort_keys.h); ties by name, then tag, thread and process.
void SortRows(EventSortingKey key, std::vector<EventRow>* rows);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_REPORT_BUILDER_H_
