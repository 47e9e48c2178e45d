// The window's allocations and frees from every thread, merged in time order: the
// source of "which rows held memory at the high-water mark" (at_peak), of the memory
// counter tracks in the Chrome trace and of the summary's timeline, which share one
// bounded replay (ForEachLivePoint).
#ifndef PADDLE_PROF_SRC_MEMORY_TIMELINE_H_
#define PADDLE_PROF_SRC_MEMORY_TIMELINE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "call_paths.h"
#include "collection.h"
#include "memory_categories.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// The index in `events` (gathered, in tick order) of the allocation of the block that
// thread `thread` allocated at `tick`, or events.size() when there is none. Found by
// galloping out from `hint`, then reading the ties: a free's allocation is most often a
// few events before it, so the search stays in the cache where a table of every block
// would not.
size_t AllocationEvent(const std::vector<MemoryEvent>& events, int thread, uint64_t tick,
                       size_t hint);

// Replays `events` on `place` from `start_bytes` and returns, largest first, the rows
// whose blocks were live at the first moment of the highest total (the blocks live at
// the window's start count as "[before profiling]"), one entry per call path the row's
// blocks were allocated on (`paths`, when given). A row some of whose frees do not say
// where their block came from (the native place's intervals, a lost record) is one
// entry, with the path that allocated most of it.
// `highest`, when given, receives the highest total the replay reached.
// `peak_tick`, when given, receives the tick of the peak (0 for the window's start).
std::vector<RowBytes> RowsAtPeak(const std::vector<MemoryEvent>& events, int place,
                                 int64_t start_bytes, int64_t* highest = nullptr,
                                 CallPaths* paths = nullptr, uint64_t* peak_tick = nullptr);

// The native place's rows at the moment of its exact peak (Collection::native_peak):
// each thread's records up to its share's tick and its share's open interval
// (native_peak.h), so that they add up to the peak. Largest first, as RowsAtPeak.
std::vector<RowBytes> NativeRowsAtPeak(const Collection& c, int place, CallPaths* paths);

// The highest live bytes the replay of `place` reaches within each step of `c.steps`:
// from the mark before it (or the window's start) to its own.
std::vector<int64_t> ReplayedStepPeaks(const Collection& c, int place);

// A moment of a place's live bytes: the window's start (index 0), or right after the
// place's index-th allocation or free of the window.
struct LivePoint {
  uint64_t tick = 0;
  int64_t bytes = 0;
  size_t index = 0;
};

// What each time bucket keeps once a place has more points than the bound: the trace
// draws a counter's dips too, the summary's timeline only the highs.
enum class BucketKeeps { kLowAndHigh, kHigh };

// Calls `emit` with the points of `place`'s live bytes, in time order: the window's
// start bytes, then the bytes after each allocation and free. Past `bound` points (0:
// none; at least 4), the window is cut into equal time buckets, (bound - 2) / 2 of them
// each keeping the point of its lowest and of its highest bytes (kLowAndHigh), or
// bound - 2 each keeping its highest (kHigh), the first of each if tied; the place's last
// point follows if a bucket did not keep it. So the points start and end where the place
// did and reach its replayed peak, in at most `bound` of them.
template <typename Emit>
void ForEachLivePoint(const Collection& c, int place, int64_t bound, BucketKeeps keeps, Emit emit) {
  int64_t live = c.places[place].start_bytes;
  emit(LivePoint{c.start_tick, live, 0});
  size_t events = 0;
  for (const MemoryEvent& e : c.memory_events) events += e.place == place;
  if (bound == 0 || static_cast<int64_t>(events) < bound) {
    size_t index = 0;
    for (const MemoryEvent& e : c.memory_events) {
      if (e.place != place) continue;
      live += e.delta;
      emit(LivePoint{e.tick, live, ++index});
    }
    return;
  }
  const bool lows = keeps == BucketKeeps::kLowAndHigh;
  const uint64_t buckets = static_cast<uint64_t>(bound - 2) / (lows ? 2 : 1);
  const uint64_t width = (c.end_tick > c.start_tick ? c.end_tick - c.start_tick : 0) / buckets + 1;
  LivePoint low, high, last;
  auto emit_bucket = [&] {
    if (!lows) {
      emit(high);
      return;
    }
    emit(low.index <= high.index ? low : high);
    if (low.index != high.index) emit(low.index < high.index ? high : low);
  };
  uint64_t bucket = 0;
  size_t index = 0;
  for (const MemoryEvent& e : c.memory_events) {
    if (e.place != place) continue;
    live += e.delta;
    last = {e.tick, live, ++index};
    const uint64_t b =
        std::min((e.tick > c.start_tick ? e.tick - c.start_tick : 0) / width, buckets - 1);
    if (index == 1 || b != bucket) {
      if (index > 1) emit_bucket();
      bucket = b;
      low = high = last;
    } else if (live < low.bytes) {
      low = last;
    } else if (live > high.bytes) {
      high = last;
    }
  }
  emit_bucket();
  if (last.index != high.index && (!lows || last.index != low.index)) emit(last);
}

// The most points of a place in the summary's timeline.
constexpr int64_t kTimelinePoints = 2000;

// `place`'s live bytes over the window for Report::timeline, t_ms from the window's
// start in whole microseconds: ForEachLivePoint with buckets keeping their highs,
// bounded to one point less than kTimelinePoints. The point left is for a `peak_bytes`
// above every replayed point (the native place's sampled peak, memory records dropped,
// the timeline switched off), so that the peak is always one of the points: it goes at
// the end of the first step whose peak on the place it is (the step marks saw it
// there), else right after the replay's first highest point. A place with no
// allocation or free in the window ends with its end bytes at the window's end.
// With `categories`, each point's bytes by category too (every point's at most its
// bytes: the point added for a peak above the replay has its predecessor's).
TimelinePoints PlaceTimeline(const Collection& c, int place, int64_t peak_bytes,
                             const BlockCategories* categories = nullptr);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_TIMELINE_H_
