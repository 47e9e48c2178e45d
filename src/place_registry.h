// The places memory is tracked on, each with always-on counters: live bytes, the
// high-water mark since the last step mark, frees of unknown blocks. A place gets a
// small index on first sight (at most kMaxPlaces), which records and blocks carry.
#ifndef PADDLE_PROF_SRC_PLACE_REGISTRY_H_
#define PADDLE_PROF_SRC_PLACE_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "paddle_prof/place.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

constexpr int kMaxPlaces = 16;

// One shared atomic add and, on a new high, a compare-and-swap: the price of an exact
// peak of a sum over threads. The peak has a cache line of its own: threads only read
// it until a new high, while `live` changes with every block.
struct alignas(64) PlaceCounters {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> untracked_frees{0};
  alignas(64) std::atomic<int64_t> step_peak{0};

  void Add(int64_t bytes) {
    const int64_t now = live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    int64_t peak = step_peak.load(std::memory_order_relaxed);
    while (now > peak && !step_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void Sub(int64_t bytes) { live.fetch_sub(bytes, std::memory_order_relaxed); }
};

// Index of `place`, registered on first sight; -1 (and an error logged once) when
// kMaxPlaces places are already known.
int PlaceIndex(const Place& place);
PlaceCounters& PlaceCountersAt(int index);
int PlaceCount();
// The registration lock, held across fork(), so that the child finds it free.
void LockPlaceRegistryForFork();
void UnlockPlaceRegistryAfterFork();
// Native memory (every malloc) is counted per thread, not in `live`: its peak is the
// largest of the samples taken at window edges and step marks (and of the timeline's).
inline std::atomic<int> g_native_place_index{-1};  // set when "native" is registered
inline bool PlaceCountedPerThread(int index) {
  return index == g_native_place_index.load(std::memory_order_relaxed);
}
// The place's live bytes now.
int64_t PlaceLiveBytes(int index);

// Window bookkeeping, called by the profiler under its lock.
void OpenPlaceWindow();
// Closes a step: each place's high-water mark since the previous step and its live bytes.
void ClosePlaceStep(std::map<std::string, int64_t>* peak_bytes,
                    std::map<std::string, int64_t>* end_bytes);
// The window's per-place figures so far (no at_peak yet); the window goes on.
std::vector<PlaceSummary> PlaceWindowFigures();
// Each place's high-water mark since the last step mark, by index.
std::vector<int64_t> PlaceStepPeaks();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PLACE_REGISTRY_H_
