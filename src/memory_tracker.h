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
// A tracked block gives back `bytes` and stays live with the rest, its owner kept: the
// calling thread's open scopes count a free of `bytes`. For memory known only by its
// total (see counter_memory.h), whose frees need not match earlier allocations.
void TrackShrink(const void* ptr, int64_t bytes);

// Blocks the live-block table had no memory for: never tracked.
int64_t UntrackedAllocs();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_TRACKER_H_
