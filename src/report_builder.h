// Turns a Collection into a Report: pairs each call with its children to get self
// time, folds calls into rows by (name, tag[, thread]), sorts, and words the warnings.
// It never touches a recorder's state, only the records.
#ifndef PADDLE_PROF_SRC_REPORT_BUILDER_H_
#define PADDLE_PROF_SRC_REPORT_BUILDER_H_

#include <cstdint>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

Report BuildReport(const Collection& collection, EventSortingKey key, bool per_thread);

// Largest first by `key`; ties by name, then tag, then thread.
void SortRows(EventSortingKey key, std::vector<EventRow>* rows);

// A row's memory figure summed over places: what the memory sort keys and the table's
// memory columns show.
int64_t SumOverPlaces(const EventRow& row, int64_t MemoryStats::*field);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_REPORT_BUILDER_H_
