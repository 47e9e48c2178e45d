// Recording an allocation or a free of a tracked block: the live-block table, the
// place's counters and, while profiling, the calling thread's open scopes and its
// memory records. TrackingAllocator and RecordAlloc/RecordFree both end here.
#ifndef PADDLE_PROF_SRC_MEMORY_TRACKER_H_
#define PADDLE_PROF_SRC_MEMORY_TRACKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace paddle_prof::internal {

// Who made a block, so that a TrackingAllocator never hands its base a block another
// allocator made: kAnySource for RecordAlloc, the preload library and counters, else
// the TrackingAllocator base's id (1 to 254; kManySources for any past those).
constexpr uint8_t kAnySource = 0;
constexpr uint8_t kManySources = 255;

// No address space holds a larger block (x86-64 and AArch64 user space is at most 2^56
// bytes with 5-level tables): a larger size is a caller's error. The bound keeps sums of
// sizes, over the blocks of a place or the allocations of a row, far from overflowing.
constexpr size_t kLargestBlock = size_t{1} << 56;

// `place` is a PlaceIndex(); a negative one (too many places) is not tracked. True when
// the block is tracked now: false for nullptr, a size above kLargestBlock (counted) and a
// block the live-block table had no memory for (counted). The caller's allocator never
// hands out a live pointer (RecordAlloc checks what a framework reports).
bool TrackAlloc(int place, const void* ptr, size_t bytes, uint8_t source = kAnySource);
// True when `ptr` was a tracked block; false (and the place's untracked_frees counted)
// for a pointer never tracked or already freed, and for a block another source made
// when `source` is not kAnySource (the block stays live).
bool TrackFree(int place, const void* ptr, uint8_t source = kAnySource);
// A tracked block gives back `bytes` and stays live with the rest, its owner kept: the
// calling thread's open scopes count a free of `bytes`. For memory known only by its
// total (see counter_memory.h), whose frees need not match earlier allocations.
void TrackShrink(const void* ptr, int64_t bytes);

// A block its allocator handed out before it was tracked, known from now on as if
// allocated now (with no window open: as live since before any window). Whatever was
// tracked at `ptr` before (a native block, say) is freed first. As TrackAlloc.
bool AdoptBlock(int place, const void* ptr, size_t bytes);

// Tells what the live tracked block at `ptr` is (block_kind.h), merged into what was
// told of it before; kept for the block's whole life. False when no block is live
// there. Off the hot path: it looks in every thread's table.
bool MarkBlock(const void* ptr, uint8_t kind);

// Since the process started, for the report's warnings.
struct TrackerCounts {
  int64_t untracked = 0;   // blocks the live-block table had no memory for
  int64_t oversized = 0;   // sizes above kLargestBlock, never tracked
  int64_t live_again = 0;  // RecordAlloc of a pointer still live: the old block freed first
};
TrackerCounts TrackerCountsNow();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_TRACKER_H_
