#include "place_registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <mutex>

#include "live_block_table.h"
#include "native_guard.h"

namespace paddle_prof {

std::string PlaceName(const Place& place) {
  switch (place.type) {
    case Place::Type::kCPU:
      return "CPU";
    case Place::Type::kCUDA:
      return "CUDA:" + std::to_string(place.device);
    case Place::Type::kNative:
      return "native";
  }
  return "unknown";
}

namespace internal {

namespace {

struct PlaceWindowState {
  int64_t start_bytes = 0;
  int64_t peak_bytes = 0;  // over the window's closed steps
  int64_t start_untracked = 0;
};

struct Registry {
  std::mutex mu;  // registration only; lookups read `count` and the published entries
  std::atomic<int> count{0};
  std::array<Place, kMaxPlaces> places{};
  std::array<std::string, kMaxPlaces> names;
  std::array<PlaceCounters, kMaxPlaces> counters;
  std::array<PlaceWindowState, kMaxPlaces> window;  // under the profiler's lock
};

Registry& Get() {
  static auto* registry = new Registry;  // leaked: blocks are freed during exit too
  return *registry;
}

}  // namespace

int PlaceIndex(const Place& place) {
  Registry& r = Get();
  const int n = r.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (r.places[i] == place) return i;
  }
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(r.mu);
  const int m = r.count.load(std::memory_order_relaxed);
  for (int i = n; i < m; ++i) {
    if (r.places[i] == place) return i;
  }
  if (m == kMaxPlaces) {
    LOG_FIRST_N(ERROR, 1) << "paddle_prof: more than " << kMaxPlaces << " places; memory on "
                          << PlaceName(place) << " is not tracked";
    return -1;
  }
  r.places[m] = place;
  r.names[m] = PlaceName(place);
  if (place.type == Place::Type::kNative) g_native_place_index.store(m, std::memory_order_relaxed);
  r.count.store(m + 1, std::memory_order_release);
  return m;
}

void LockPlaceRegistryForFork() { Get().mu.lock(); }
void UnlockPlaceRegistryAfterFork() { Get().mu.unlock(); }

PlaceCounters& PlaceCountersAt(int index) { return Get().counters[index]; }
int PlaceCount() { return Get().count.load(std::memory_order_acquire); }

int64_t PlaceLiveBytes(int index) {
  return PlaceCountedPerThread(index) ? LiveBlocks::PerThreadLive()
                                      : Get().counters[index].live.load(std::memory_order_relaxed);
}

void OpenPlaceWindow() {
  Registry& r = Get();
  for (int i = 0; i < PlaceCount(); ++i) {
    PlaceCounters& c = r.counters[i];
    const int64_t live = PlaceLiveBytes(i);
    c.step_peak.store(live, std::memory_order_relaxed);
    r.window[i] = {live, live, c.untracked_frees.load(std::memory_order_relaxed)};
  }
}

void ClosePlaceStep(std::map<std::string, int64_t>* peak_bytes,
                    std::map<std::string, int64_t>* end_bytes) {
  Registry& r = Get();
  for (int i = 0; i < PlaceCount(); ++i) {
    PlaceCounters& c = r.counters[i];
    const int64_t live = PlaceLiveBytes(i);
    const int64_t step_peak = std::max(c.step_peak.exchange(live, std::memory_order_relaxed), live);
    r.window[i].peak_bytes = std::max(r.window[i].peak_bytes, step_peak);
    (*peak_bytes)[r.names[i]] = step_peak;
    (*end_bytes)[r.names[i]] = live;
  }
}

std::vector<int64_t> PlaceStepPeaks() {
  std::vector<int64_t> peaks;
  for (int i = 0; i < PlaceCount(); ++i) {
    peaks.push_back(
        std::max(Get().counters[i].step_peak.load(std::memory_order_relaxed), PlaceLiveBytes(i)));
  }
  return peaks;
}

std::vector<PlaceSummary> PlaceWindowFigures() {
  Registry& r = Get();
  std::vector<PlaceSummary> places;
  for (int i = 0; i < PlaceCount(); ++i) {
    PlaceCounters& c = r.counters[i];
    PlaceSummary p;
    p.place = r.names[i];
    p.start_bytes = r.window[i].start_bytes;
    p.end_bytes = PlaceLiveBytes(i);
    p.peak_bytes = std::max(
        {r.window[i].peak_bytes, c.step_peak.load(std::memory_order_relaxed), p.end_bytes});
    p.untracked_frees =
        c.untracked_frees.load(std::memory_order_relaxed) - r.window[i].start_untracked;
    places.push_back(std::move(p));
  }
  return places;
}

}  // namespace internal
}  // namespace paddle_prof
