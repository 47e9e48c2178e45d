// Ties each GPU activity to the call that launched it: CUPTI's API-call correlation
// id leads to the scope id the launching thread had pushed (GpuCapture), and the
// kGpuScope record after each call leads from that id to the call's record.
#ifndef PADDLE_PROF_SRC_GPU_CORRELATION_H_
#define PADDLE_PROF_SRC_GPU_CORRELATION_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gpu_activity.h"

namespace paddle_prof::internal {

struct Collection;

struct GpuLaunch {
  int thread = -1;          // position in Collection::threads; -1: no recorded call
  size_t call = 0;          // index of the call's record in that thread's buffer
  uint64_t call_start = 0;  // the tick the call began at: where the trace's arrow starts
};

struct GpuCorrelation {
  std::vector<GpuLaunch> launch;  // one per GpuCapture::activities entry
  // Per thread position: call record index -> the activities it launched directly
  // (not through a nested call).
  std::vector<std::unordered_map<size_t, std::vector<size_t>>> launched_by;
  int64_t no_event = 0;    // launched with no scope open
  int64_t unrecorded = 0;  // launched in a scope whose call is not in the report
  uint64_t no_event_ticks = 0;
};

GpuCorrelation CorrelateGpu(const Collection& c);

// Total length of the union of [start, end) intervals: GPU time that overlapping
// kernels (several streams) share is counted once. Sorts `intervals` and leaves them
// merged (disjoint, in order).
using TickInterval = std::pair<uint64_t, uint64_t>;
uint64_t MergeIntervals(std::vector<TickInterval>* intervals);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_GPU_CORRELATION_H_
