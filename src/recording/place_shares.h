// A thread's share of each place's live bytes, written by that thread alone, so that
// tracked allocations on many threads write no common cache line. A place's live bytes
// are the sum of the shares over threads; a block freed on another thread than the one
// that allocated it lowers the freeing thread's share, which may go below zero.
//
// A place's peak is then a matter for the report: with the memory timeline, it replays
// the threads' timestamped records. Without it, each share also keeps its own
// high-water mark since the place's last sample (the window's start, each step mark),
// and which sample it belongs to: when one thread moved a place's bytes between two
// samples, that thread's mark plus the others' unchanged shares is the exact peak; when
// several did, it is an upper bound, as the report then says.
#ifndef PADDLE_PROF_SRC_PLACE_SHARES_H_
#define PADDLE_PROF_SRC_PLACE_SHARES_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

namespace paddle_prof::internal {

constexpr int kMaxPlaces = 16;

// Advanced by the profiler at each sample of the places (under its lock); a share whose
// `sample` differs has not moved since.
inline std::atomic<uint32_t> g_place_sample{1};

struct alignas(64) PlaceShares {
  std::array<std::atomic<int64_t>, kMaxPlaces> live{};
  std::array<std::atomic<int64_t>, kMaxPlaces> high{};     // since `sample`
  std::array<std::atomic<uint32_t>, kMaxPlaces> sample{};  // g_place_sample when it moved

  // Plain loads and stores: only the owning thread writes.
  void Add(int place, int64_t delta) {
    std::atomic<int64_t>& share = live[place];
    share.store(share.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  // Add() that also keeps the high-water mark since the last sample.
  void AddKeepingHigh(int place, int64_t delta) {
    constexpr auto kRelaxed = std::memory_order_relaxed;
    const int64_t before = live[place].load(kRelaxed);
    const int64_t now = before + delta;
    live[place].store(now, kRelaxed);
    const uint32_t current = g_place_sample.load(kRelaxed);
    int64_t h = high[place].load(kRelaxed);
    if (sample[place].load(kRelaxed) != current) {  // first move since the sample
      h = before;
      sample[place].store(current, kRelaxed);
    }
    high[place].store(std::max(h, now), kRelaxed);
  }
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PLACE_SHARES_H_
