#include "gpu_correlation.h"

#include <algorithm>

#include "collection.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

GpuCorrelation CorrelateGpu(const Collection& c) {
  GpuCorrelation out;
  out.launch.resize(c.gpu.activities.size());
  out.launched_by.resize(c.threads.size());
  if (c.gpu.activities.empty()) return out;

  // Scope id -> (thread position, call record), for the calls the report holds.
  std::unordered_map<uint64_t, GpuLaunch> call_of_scope;
  for (size_t t = 0; t < c.threads.size(); ++t) {
    for (RecordCursor records(c.threads[t]); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (call.has_gpu_scope && Kept(c, call)) {
        call_of_scope[call.gpu_scope] = {static_cast<int>(t), call.index, call.start};
      }
    }
  }

  for (size_t a = 0; a < c.gpu.activities.size(); ++a) {
    const GpuActivity& activity = c.gpu.activities[a];
    const auto scope = c.gpu.scope_of_call.find(activity.correlation);
    if (scope == c.gpu.scope_of_call.end()) {
      ++out.no_event;
      out.no_event_ticks += activity.end > activity.start ? activity.end - activity.start : 0;
      continue;
    }
    const auto call = call_of_scope.find(scope->second);
    if (call == call_of_scope.end()) {
      ++out.unrecorded;
      continue;
    }
    out.launch[a] = call->second;
    out.launched_by[call->second.thread][call->second.call].push_back(a);
  }
  return out;
}

uint64_t MergeIntervals(std::vector<TickInterval>* intervals) {
  auto& v = *intervals;
  std::sort(v.begin(), v.end());
  size_t kept = 0;
  uint64_t total = 0;
  for (const TickInterval& next : v) {
    if (next.second <= next.first) continue;
    if (kept > 0 && next.first <= v[kept - 1].second) {
      v[kept - 1].second = std::max(v[kept - 1].second, next.second);
    } else {
      v[kept++] = next;
    }
  }
  v.resize(kept);
  for (const TickInterval& i : v) total += i.second - i.first;
  return total;
}

}  // namespace paddle_prof::internal
