// What a native block's stack costs under run --native with record_stacks: the unwind
// of its return addresses and the per-thread lookup of the stack, at a depth of 10
// frames below the benchmark loop (each a real call: the recursion is not folded).
//
//   ./native_stack_benchmark [--benchmark_format=json]
#include <benchmark/benchmark.h>

#include <cstdint>

#include "native_stacks.h"
#include "paddle_prof/paddle_prof.h"
#include "place_registry.h"

namespace {

__attribute__((noinline)) uint32_t CaptureAt(int depth) {
  if (depth == 0) return paddle_prof::internal::CaptureNativeStack();
  const uint32_t id = CaptureAt(depth - 1);
  benchmark::DoNotOptimize(depth);  // not a tail call: each level keeps its frame
  return id;
}

void BM_NativeStackCapture(benchmark::State& state) {
  paddle_prof::internal::PlaceIndex(paddle_prof::NativePlace());  // what the preload registers
  if (!paddle_prof::internal::CaptureNativeStacks(true)) {
    state.SkipWithError("libunwind.so.8 could not be loaded");
    return;
  }
  const int depth = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(CaptureAt(depth));
  paddle_prof::internal::CaptureNativeStacks(false);
}
BENCHMARK(BM_NativeStackCapture)->Arg(10);

}  // namespace

BENCHMARK_MAIN();
