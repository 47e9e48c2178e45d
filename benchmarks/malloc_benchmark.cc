// A malloc/free pair, to run plain and under the preload library:
//
//   ./malloc_benchmark
//   LD_PRELOAD=build/libpaddle_prof_preload.so ./malloc_benchmark
//
// The difference is what native tracking costs every allocation of a profiled program.
#include <benchmark/benchmark.h>

#include <cstdlib>

namespace {

void BM_MallocFree(benchmark::State& state) {
  for (auto _ : state) {
    void* p = std::malloc(64);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_MallocFree)->Threads(1)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
