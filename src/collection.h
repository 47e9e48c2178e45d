// What the collector hands to the report builder and the trace writer: the window's
// bounds and clock rate, each thread's records (read in place, while the registry is
// held) and the counts behind the warnings.
#ifndef PADDLE_PROF_SRC_COLLECTION_H_
#define PADDLE_PROF_SRC_COLLECTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "event_buffer.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

struct ThreadSnapshot {
  int index = 0;  // "thread0" in per-thread rows
  int os_tid = 0;
  std::string name;
  const EventBuffer* buffer = nullptr;
  size_t size = 0;  // records published when the window closed
};

struct Collection {
  ProfilerState state = ProfilerState::kCPU;
  uint64_t start_tick = 0;
  uint64_t end_tick = 0;
  double ns_per_tick = 1.0;
  std::vector<ThreadSnapshot> threads;
  std::vector<uint64_t> step_ticks;  // one per MarkStep(), in order
  // Summed over the window's recorders.
  int64_t open = 0;
  int64_t forced_closes = 0;
  int64_t foreign_ends = 0;
  int64_t dropped = 0;
  std::vector<std::string> warnings;  // found while collecting (the clock's)

  double TicksToMs(uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick / 1e6; }
  double TicksToUs(uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick / 1e3; }
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_COLLECTION_H_
