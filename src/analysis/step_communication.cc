#include "step_communication.h"

#include <algorithm>
#include <string>

#include "gpu_correlation.h"
#include "name_interner.h"
#include "record_cursor.h"

namespace paddle_prof::internal {

bool IsCommunication(std::string_view name) {
  for (const std::string_view prefix :
       {"c10d::", "gloo:", "nccl:", "mpi:", "ucc:", "record_param_comms"}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool WaitsForCommunication(std::string_view name) {
  constexpr std::string_view kDdp = "DistributedDataParallel.";
  return IsCommunication(name) || name.substr(0, kDdp.size()) == kDdp;
}

std::vector<double> CommunicationMsPerStep(const Collection& c) {
  std::vector<double> ms(c.steps.size(), 0.0);
  if (c.steps.empty()) return ms;
  std::vector<TickInterval> calls = KeptCallsNamed(
      c, [](const char* name) { return IsCommunication(NameBytes(name)); });
  if (calls.empty()) return ms;
  MergeIntervals(&calls);  // sorted, disjoint
  uint64_t step_start = c.start_tick;
  size_t next = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const uint64_t step_end = c.steps[i].tick;
    while (next < calls.size() && calls[next].second <= step_start) ++next;
    uint64_t ticks = 0;
    for (size_t k = next; k < calls.size() && calls[k].first < step_end; ++k) {
      const uint64_t from = std::max(calls[k].first, step_start);
      const uint64_t to = std::min(calls[k].second, step_end);
      if (to > from) ticks += to - from;
    }
    ms[i] = c.TicksToMs(ticks);
    step_start = step_end;
  }
  return ms;
}

}  // namespace paddle_prof::internal
