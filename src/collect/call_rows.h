// What one thread's kept calls add up to, by event: the report's rows before threads,
// and equal names at different addresses, merge. The collection's pass over the records
// (record_scan.h) fills them; the report builder merges and formats them.
#ifndef PADDLE_PROF_SRC_CALL_ROWS_H_
#define PADDLE_PROF_SRC_CALL_ROWS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_durations.h"
#include "memory_figures.h"
#include "place_shares.h"

namespace paddle_prof::internal {

struct Accumulator {
  int64_t calls = 0;
  uint64_t total = 0;
  uint64_t self = 0;
  uint64_t min = std::numeric_limits<uint64_t>::max();
  uint64_t max = 0;
  // GPU time per call: the union of the GPU work it and its nested calls launched.
  uint64_t gpu_total = 0;
  uint64_t gpu_min = std::numeric_limits<uint64_t>::max();
  uint64_t gpu_max = 0;

  // By place index, flat: every call adds its figures here.
  std::array<MemoryStats, kMaxPlaces> memory{};
  uint32_t places = 0;  // bit i: place i has figures
  std::map<const std::string*, int64_t> sources;  // record_stacks: calls by source frame
  CallDurations durations;                        // for the percentiles

  void Add(uint64_t duration, uint64_t self_ticks) {
    ++calls;
    durations.Add(duration);
    total += duration;
    self += self_ticks;
    min = std::min(min, duration);
    max = std::max(max, duration);
  }
  void AddGpu(uint64_t gpu_ticks) {
    gpu_total += gpu_ticks;
    gpu_min = std::min(gpu_min, gpu_ticks);
    gpu_max = std::max(gpu_max, gpu_ticks);
  }
  void Merge(const Accumulator& other) {
    calls += other.calls;
    total += other.total;
    self += other.self;
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    gpu_total += other.gpu_total;
    gpu_min = std::min(gpu_min, other.gpu_min);
    gpu_max = std::max(gpu_max, other.gpu_max);
    for (int place = 0; place < kMaxPlaces; ++place) {
      if (other.Has(place)) AddMemory(place, other.memory[place]);
    }
    for (const auto& [frame, calls] : other.sources) sources[frame] += calls;
    durations.Merge(other.durations);
  }
  void AddMemory(int place, const MemoryStats& m) {
    if (place < 0 || place >= kMaxPlaces) return;
    AddUp(&memory[place], m);
    places |= 1u << place;
  }
  bool Has(int place) const { return (places >> place & 1u) != 0; }
};

// Records name their event by pointer: cheap to hash while scanning millions of them.
struct PointerKey {
  const char* name;
  const char* tag;
  bool operator==(const PointerKey& o) const { return name == o.name && tag == o.tag; }
};
struct PointerKeyHash {
  size_t operator()(const PointerKey& k) const {
    return std::hash<const void*>()(k.name) * 31 + std::hash<const void*>()(k.tag);
  }
};
// Node-based: a row's address survives rehashing, so the scan keeps the last one.
using PointerRows = std::unordered_map<PointerKey, Accumulator, PointerKeyHash>;

struct ThreadCalls {
  PointerRows rows;
  int64_t cut = 0;   // calls begun before the last reset
  int64_t open = 0;  // calls still open, or ended after the window closed
  // With memory categories: the thread's kept op calls (IsOpName) that no other holds,
  // as start and end ticks in time order (OutermostCalls).
  std::vector<std::pair<uint64_t, uint64_t>> outermost_ops;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CALL_ROWS_H_
