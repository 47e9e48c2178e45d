// The window's allocations and frees from every thread, merged in time order: the
// source of "which rows held memory at the high-water mark" (at_peak) and of the
// memory counter tracks in the Chrome trace.
#ifndef PADDLE_PROF_SRC_MEMORY_TIMELINE_H_
#define PADDLE_PROF_SRC_MEMORY_TIMELINE_H_

#include <cstdint>
#include <vector>

#include "collection.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// All threads' kAlloc/kFree records inside the window, sorted by tick: what the
// collector stores in Collection::memory_events, for the report and the trace alike.
std::vector<MemoryEvent> GatherMemoryEvents(const Collection& collection);

// Replays `events` on `place` from `start_bytes` and returns, largest first, the rows
// whose blocks were live at the first moment of the highest total (the blocks live at
// the window's start count as "[before profiling]").
// `highest`, when given, receives the highest total the replay reached.
std::vector<RowBytes> RowsAtPeak(const std::vector<MemoryEvent>& events, int place,
                                 int64_t start_bytes, int64_t* highest = nullptr);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_TIMELINE_H_
