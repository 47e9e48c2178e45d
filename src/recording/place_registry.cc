#include "place_registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <mutex>

#include "capture_files.h"
#include "live_block_table.h"
#include "native_peak.h"
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
    case Place::Type::kCUDAPinned:
      return "CUDA_PINNED";
  }
  return "unknown";
}

namespace internal {

namespace {

struct PlaceWindowState {
  int64_t start_bytes = 0;
  int64_t peak_bytes = 0;  // over the window's closed steps
  int64_t start_untracked = 0;
  int64_t step_start = 0;  // live bytes at the last sample
  int movers = 0;          // the most threads that moved its bytes between two samples
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
  std::unique_lock<std::mutex> lock(r.mu);
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
  lock.unlock();  // the capture's lock comes before this one (fork takes both in that order)
  LogCapturedPlace(m, r.names[m]);
  return m;
}

void LockPlaceRegistryForFork() { Get().mu.lock(); }
void UnlockPlaceRegistryAfterFork() { Get().mu.unlock(); }

PlaceCounters& PlaceCountersAt(int index) { return Get().counters[index]; }
int PlaceCount() { return Get().count.load(std::memory_order_acquire); }

namespace {

LiveBlocks::PlaceSum SumSinceSample(int index) {
  return LiveBlocks::SumShares(index, g_place_sample.load(std::memory_order_relaxed));
}

// The highest the place's bytes reached since its last sample, as far as the shares
// tell (see place_shares.h).
int64_t HighSinceSample(const PlaceWindowState& w, const LiveBlocks::PlaceSum& sum) {
  return std::max({w.step_start, sum.live, sum.high});
}

// The shares' next moves belong to the next sample.
void NextSample() { g_place_sample.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

int64_t PlaceLiveBytes(int index) { return SumSinceSample(index).live; }

void OpenPlaceWindow() {
  Registry& r = Get();
  // The native place's figures come from its one word (native_peak.h), exact: its
  // bytes above the start.
  RestartNativeWindow();
  for (int i = 0; i < PlaceCount(); ++i) {
    const int64_t live = PlaceLiveBytes(i);
    r.window[i] = {live, live, r.counters[i].untracked_frees.load(std::memory_order_relaxed), live,
                   0};
  }
  NextSample();
}

std::map<std::string, int64_t> PlaceStepFigures::PeakByName() const {
  std::map<std::string, int64_t> by_name;
  for (int i = 0; i < places; ++i) by_name[Get().names[i]] = peak_bytes[i];
  return by_name;
}

std::map<std::string, int64_t> PlaceStepFigures::EndByName() const {
  std::map<std::string, int64_t> by_name;
  for (int i = 0; i < places; ++i) by_name[Get().names[i]] = end_bytes[i];
  return by_name;
}

PlaceStepFigures ClosePlaceStep() {
  Registry& r = Get();
  PlaceStepFigures figures;
  figures.places = PlaceCount();
  for (int i = 0; i < figures.places; ++i) {
    PlaceWindowState& w = r.window[i];
    LiveBlocks::PlaceSum sum = SumSinceSample(i);
    int64_t step_peak = HighSinceSample(w, sum);
    if (IsNativePlace(i)) {
      sum.live = w.start_bytes + NativeWindowLive();
      step_peak = w.start_bytes + TakeNativeStepPeak();
    }
    w.peak_bytes = std::max(w.peak_bytes, step_peak);
    w.step_start = sum.live;
    w.movers = std::max(w.movers, sum.moved);
    figures.peak_bytes[i] = step_peak;
    figures.end_bytes[i] = sum.live;
  }
  NextSample();
  return figures;
}

std::vector<int64_t> PlaceStepPeaks() {
  Registry& r = Get();
  std::vector<int64_t> peaks;
  for (int i = 0; i < PlaceCount(); ++i) {
    peaks.push_back(IsNativePlace(i) ? r.window[i].start_bytes + NativeStepPeakNow()
                                     : HighSinceSample(r.window[i], SumSinceSample(i)));
  }
  return peaks;
}

std::vector<int> PlaceMovers() {
  Registry& r = Get();
  std::vector<int> movers;
  for (int i = 0; i < PlaceCount(); ++i) {
    movers.push_back(std::max(r.window[i].movers, SumSinceSample(i).moved));
  }
  return movers;
}

std::vector<PlaceSummary> PlaceWindowFigures() {
  Registry& r = Get();
  std::vector<PlaceSummary> places;
  for (int i = 0; i < PlaceCount(); ++i) {
    const PlaceWindowState& w = r.window[i];
    const LiveBlocks::PlaceSum sum = SumSinceSample(i);
    PlaceSummary p;
    p.place = r.names[i];
    p.start_bytes = w.start_bytes;
    p.end_bytes = sum.live;
    p.peak_bytes = std::max(w.peak_bytes, HighSinceSample(w, sum));
    if (IsNativePlace(i)) {
      p.end_bytes = w.start_bytes + NativeWindowLive();
      p.peak_bytes = w.start_bytes + NativeWindowPeak();
    }
    p.untracked_frees =
        r.counters[i].untracked_frees.load(std::memory_order_relaxed) - w.start_untracked;
    places.push_back(std::move(p));
  }
  return places;
}

}  // namespace internal
}  // namespace paddle_prof
