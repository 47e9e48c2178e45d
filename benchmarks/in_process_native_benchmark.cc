// A 64-byte malloc/free pair inside a profiling window: untracked (no native tracking),
// then tracked in-process as profiler(native=True) tracks it, with no preload library.
// Run the same pair under the preload library beside it (malloc_benchmark outside a
// window, native_pairs inside one) to compare the two ways of tracking:
//
//   ./in_process_native_benchmark
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "in_process_native.h"
#include "paddle_prof/paddle_prof.h"
#include "profiler_control.h"

namespace {

void BM_PairInAWindow(benchmark::State& state) {
  const bool tracked = state.range(0) != 0;
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  if (tracked && !paddle_prof::internal::StartInProcessNative().empty()) {
    state.SkipWithError("native tracking could not start");
  }
  {
    paddle_prof::RecordEvent op("pairs");
    for (auto _ : state) {
      void* p = std::malloc(64);
      benchmark::DoNotOptimize(p);
      std::free(p);
    }
  }
  paddle_prof::internal::StopProfiler(paddle_prof::internal::ReportOptions{});
  paddle_prof::internal::StopInProcessNative();
}
BENCHMARK(BM_PairInAWindow)->ArgName("tracked")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
