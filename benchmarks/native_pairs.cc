// A program that allocates and frees N small blocks with malloc inside a profiled
// window of 100 steps: what native_vs_heaptrack.sh runs under the preload library and
// under heaptrack.
//
//   native_pairs [N=10000000]
#include <cstdio>
#include <cstdlib>

#include "paddle_prof/paddle_prof.h"

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 10000000;
  constexpr long kSteps = 100;
  void* volatile block;
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (long step = 0; step < kSteps; ++step) {
    paddle_prof::RecordEvent op("train_step");
    for (long i = 0; i < pairs / kSteps; ++i) {
      block = std::malloc(64 + (i & 7) * 8);
      std::free(block);
    }
    paddle_prof::MarkStep();
  }
  const paddle_prof::Report report = paddle_prof::StopProfiler();
  long allocs = 0;
  for (const paddle_prof::EventRow& row : report.events) {
    const auto native = row.memory.find("native");
    if (native != row.memory.end()) allocs += native->second.alloc_count;
  }
  std::printf("%ld native allocations tracked\n", allocs);
}
