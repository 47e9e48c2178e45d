#include "memory_tracker.h"

#include <algorithm>

#include "live_block_table.h"
#include "native_peak.h"
#include "paddle_prof/allocator.h"
#include "paddle_prof/profiler_enabled.h"
#include "place_registry.h"
#include "thread_recorder.h"
#include "window_state.h"

namespace paddle_prof {

namespace internal {

namespace {

std::atomic<int64_t> g_untracked_allocs{0};
std::atomic<int64_t> g_oversized_allocs{0};
std::atomic<int64_t> g_live_again{0};

// The calling thread's share of `place` changes by `delta`. Inside a window without the
// memory timeline, the share keeps its high-water mark too: the place's peak is then
// found from the shares (place_shares.h); with the timeline, from its replay.
inline void AddToShare(uint64_t window, int place, int64_t delta) {
  PlaceShares& shares = LiveBlocks::OwnShares();
  if (window != 0 && !MemoryTimelineOn()) {
    shares.AddKeepingHigh(place, delta);
  } else {
    shares.Add(place, delta);
  }
}

// Within a window, the native place's bytes also move its one word (native_peak.h).
inline NativeMove MoveNative(uint64_t window, int place, int64_t delta) {
  return window != 0 && IsNativePlace(place) ? MoveNativeBytes(delta) : NativeMove{};
}

// `gone` bytes leave the place's live bytes, and the calling thread's open scopes count
// the free of `freed`.
inline void Released(const LiveBlock& freed, int64_t gone) {
  const uint64_t window = g_window.load(std::memory_order_acquire);
  AddToShare(window, freed.place, -gone);
  const NativeMove move = MoveNative(window, freed.place, -gone);
  if (window == 0) return;
  if (ThreadRecorder* recorder = ThreadRecorder::Current()) {
    recorder->ChargeFree(window, freed, move);
  }
}

}  // namespace

TrackerCounts TrackerCountsNow() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {g_untracked_allocs.load(kRelaxed), g_oversized_allocs.load(kRelaxed),
          g_live_again.load(kRelaxed)};
}

bool TrackAlloc(int place, const void* ptr, size_t bytes, uint8_t source) {
  if (place < 0 || ptr == nullptr) return false;
  if (bytes > kLargestBlock) {
    g_oversized_allocs.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  LiveBlocks::Prefetch(ptr);
  LiveBlock block;
  block.size = static_cast<int64_t>(bytes);
  block.place = place;
  block.source = source;
  const uint64_t window = g_window.load(std::memory_order_acquire);
  ThreadRecorder* recorder = window != 0 ? ThreadRecorder::Current() : nullptr;
  if (recorder != nullptr) recorder->SetOwner(window, &block);
  if (!LiveBlocks::Insert(ptr, block)) {
    g_untracked_allocs.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  AddToShare(window, place, block.size);
  const NativeMove move = MoveNative(window, place, block.size);
  if (recorder != nullptr) recorder->ChargeAlloc(block, move);
  return true;
}

bool TrackFree(int place, const void* ptr, uint8_t source) {
  if (ptr == nullptr) return false;
  LiveBlock block;
  const bool known = LiveBlocks::Remove(ptr, &block);
  const bool foreign = known && source != kAnySource && block.source != source;
  if (!known || foreign) {
    if (place >= 0) PlaceCountersAt(place).untracked_frees.fetch_add(1, std::memory_order_relaxed);
    // Still live where it came from (a framework's own allocator, another base).
    if (foreign && !LiveBlocks::Insert(ptr, block)) {
      g_untracked_allocs.fetch_add(1, std::memory_order_relaxed);
      Released(block, block.size);
    }
    return false;
  }
  Released(block, block.size);
  return true;
}

bool AdoptBlock(int place, const void* ptr, size_t bytes) {
  LiveBlock earlier;
  if (ptr != nullptr && LiveBlocks::Remove(ptr, &earlier)) Released(earlier, earlier.size);
  return TrackAlloc(place, ptr, bytes);
}

bool MarkBlock(const void* ptr, uint8_t kind) {
  return ptr != nullptr && LiveBlocks::Mark(ptr, kind & kKindBits);
}

void TrackShrink(const void* ptr, int64_t bytes) {
  LiveBlock block;
  if (ptr == nullptr || bytes <= 0 || !LiveBlocks::Remove(ptr, &block)) return;
  LiveBlock freed = block;
  freed.size = std::min(bytes, block.size);
  block.size -= freed.size;
  int64_t gone = freed.size;                                // from the place's live bytes
  if (block.size > 0 && !LiveBlocks::Insert(ptr, block)) {  // the rest is no longer tracked
    g_untracked_allocs.fetch_add(1, std::memory_order_relaxed);
    gone += block.size;
  }
  Released(freed, gone);
}

}  // namespace internal

void RecordAlloc(Place place, const void* ptr, size_t bytes) {
  const int index = internal::PlaceIndex(place);
  if (index < 0 || ptr == nullptr) return;
  // A framework's own allocator may report an address again without its free: one live
  // block per address keeps end bytes equal to the live bytes over rows. Looked for among
  // the calling thread's own blocks, where a thread-caching allocator reuses an address:
  // the other threads' would make every report cost as many lookups as there are threads.
  internal::LiveBlock old;
  if (internal::LiveBlocks::RemoveOwn(ptr, &old)) {
    internal::g_live_again.fetch_add(1, std::memory_order_relaxed);
    internal::Released(old, old.size);
  }
  internal::TrackAlloc(index, ptr, bytes);
}

void RecordFree(Place place, const void* ptr) {
  internal::TrackFree(internal::PlaceIndex(place), ptr);
}

}  // namespace paddle_prof
