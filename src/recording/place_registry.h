// The places memory is tracked on, each with its window's figures: live bytes (the sum
// of the threads' shares, place_shares.h), sampled at the window's edges and step
// marks, and frees of unknown blocks. A place gets a small index on first sight (at most
// kMaxPlaces), which records and blocks carry.
#ifndef PADDLE_PROF_SRC_PLACE_REGISTRY_H_
#define PADDLE_PROF_SRC_PLACE_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "paddle_prof/place.h"
#include "paddle_prof/report.h"
#include "place_shares.h"

namespace paddle_prof::internal {

// Written only when a free names no live block: off the tracked pair's path.
struct PlaceCounters {
  std::atomic<int64_t> untracked_frees{0};
};

// Index of `place`, registered on first sight; -1 (and an error logged once) when
// kMaxPlaces places are already known.
int PlaceIndex(const Place& place);
PlaceCounters& PlaceCountersAt(int index);
int PlaceCount();
// The registration lock, held across fork(), so that the child finds it free.
void LockPlaceRegistryForFork();
void UnlockPlaceRegistryAfterFork();
// The native place (every malloc, under --native), whose timeline is kept by intervals.
inline std::atomic<int> g_native_place_index{-1};  // set when "native" is registered
inline bool IsNativePlace(int index) {
  return index == g_native_place_index.load(std::memory_order_relaxed);
}
// The place's live bytes now.
int64_t PlaceLiveBytes(int index);

// Window bookkeeping, called by the profiler under its lock.
void OpenPlaceWindow();
// Each place's high-water mark in a step and its live bytes as the step closed, by index:
// kept without a heap allocation (own_arena.h says why).
struct PlaceStepFigures {
  int places = 0;
  std::array<int64_t, kMaxPlaces> peak_bytes{};
  std::array<int64_t, kMaxPlaces> end_bytes{};
  // By place name, for the Collection's StepMark.
  std::map<std::string, int64_t> PeakByName() const;
  std::map<std::string, int64_t> EndByName() const;
};
// Closes a step: each place's high-water mark since the previous step (its live bytes
// at either end; without the memory timeline, the threads' own marks: see
// place_shares.h) and its live bytes.
PlaceStepFigures ClosePlaceStep();
// The window's per-place figures so far (no at_peak yet); the window goes on.
std::vector<PlaceSummary> PlaceWindowFigures();
// Each place's high-water mark since the last step mark, by index.
std::vector<int64_t> PlaceStepPeaks();
// By index: the most threads that moved the place's bytes between two of its samples
// in the window so far. Without the memory timeline, past 1 its peaks are upper bounds.
std::vector<int> PlaceMovers();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PLACE_REGISTRY_H_
