// Building the report (no trace written) from 10 million recorded scopes.
//
//   ./report_benchmark [--benchmark_format=json]
#include <benchmark/benchmark.h>

#include "paddle_prof/paddle_prof.h"

namespace {

constexpr int kOps = 8;
const char* const kOpNames[kOps] = {"conv2d", "relu",    "batch_norm", "pool2d",
                                    "matmul", "softmax", "dropout",    "elementwise_add"};

void BM_BuildReport10M(benchmark::State& state) {
  const int64_t scopes = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
    // A step scope around groups of eight nested op scopes: two levels, as in training.
    for (int64_t i = 0; i < scopes; i += kOps + 1) {
      paddle_prof::RecordEvent step("train_step");
      for (int op = 0; op < kOps; ++op) paddle_prof::RecordEvent e(kOpNames[op]);
    }
    state.ResumeTiming();
    paddle_prof::Report report = paddle_prof::StopProfiler();
    benchmark::DoNotOptimize(report);
  }
  state.counters["scopes"] = static_cast<double>(scopes);
}
BENCHMARK(BM_BuildReport10M)->Arg(10000000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
