// The memory figures of one level (a scope, or a thread with no event open) on one
// place, defined once with their arithmetic, in the two layouts that pay on the hot
// path: plain integers in an open scope's slot (ScopeMemory), single-writer atomics
// for a thread's "[no event]" figures, which the collector reads while the thread goes
// on (RootUsage). Both become the report's MemoryStats.
//
// `running` is the bytes the level allocated and still holds (closed children folded
// in); `peak` the most it held at once.
#ifndef PADDLE_PROF_SRC_MEMORY_FIGURES_H_
#define PADDLE_PROF_SRC_MEMORY_FIGURES_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// A counter only its owner thread writes, and others read: a relaxed load and store,
// no locked instruction.
class OwnedCounter {
 public:
  operator int64_t() const { return value_.load(std::memory_order_relaxed); }
  OwnedCounter& operator=(int64_t v) {
    value_.store(v, std::memory_order_relaxed);
    return *this;
  }
  OwnedCounter& operator+=(int64_t delta) { return *this = *this + delta; }
  OwnedCounter& operator-=(int64_t delta) { return *this = *this - delta; }

 private:
  std::atomic<int64_t> value_{0};
};

template <typename Counter>
struct MemoryFigures {
  Counter running{};
  Counter peak{};
  Counter alloc_bytes{};
  Counter alloc_count{};
  Counter free_bytes{};
  Counter free_count{};

  void Alloc(int64_t bytes) {
    running += bytes;
    RaisePeak(running);
    alloc_bytes += bytes;
    alloc_count += 1;
  }
  void CountFree(int64_t bytes) {
    free_bytes += bytes;
    free_count += 1;
  }
  void RaisePeak(int64_t bytes) {
    if (bytes > peak) peak = bytes;
  }
  // A nested level that ended hands its figures to this one: the child's peak came on
  // top of what this level held then.
  template <typename Other>
  void Absorb(const MemoryFigures<Other>& child) {
    RaisePeak(running + child.peak);
    running += child.running;
    alloc_bytes += child.alloc_bytes;
    alloc_count += child.alloc_count;
    free_bytes += child.free_bytes;
    free_count += child.free_count;
  }
  void Clear() {
    for (Counter* c : {&running, &peak, &alloc_bytes, &alloc_count, &free_bytes, &free_count}) {
      *c = 0;
    }
  }
  MemoryStats Stats() const {
    MemoryStats s;
    s.peak_bytes = peak;
    s.alloc_bytes = alloc_bytes;
    s.alloc_count = alloc_count;
    s.free_bytes = free_bytes;
    s.free_count = free_count;
    return s;
  }
};

// A thread's figures with no event open, per place.
using RootUsage = MemoryFigures<OwnedCounter>;

// Rows add up calls: the largest peak, the sum of everything else.
inline void AddUp(MemoryStats* into, const MemoryStats& m) {
  into->peak_bytes = std::max(into->peak_bytes, m.peak_bytes);
  into->alloc_bytes += m.alloc_bytes;
  into->alloc_count += m.alloc_count;
  into->free_bytes += m.free_bytes;
  into->free_count += m.free_count;
  into->live_bytes += m.live_bytes;
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MEMORY_FIGURES_H_
