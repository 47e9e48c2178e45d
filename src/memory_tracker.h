// Recording an allocation or a free of a tracked block: the live-block table, the
// place's counters and, while profiling, the calling thread's open scopes and its
// memory records. TrackingAllocator and RecordAlloc/RecordFree both end here.
#ifndef PADDLE_PROF_SRC_MEMORY_TRACKER_H_
#define PADDLE_PROF_SRC_MEMORY_TRACKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace paddle_prof::internal {

// `place` is a PlaceIndex(); a negative one (too many places) is not tracked.
void TrackAlloc(int place, const void* ptr, size_t bytes);
void TrackFree(int place, const void* ptr);

// Blocks the live-block table had no memory for: never tracked.
int64_t UntrackedAllocs();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_TRACKER_H_
