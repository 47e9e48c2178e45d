// Building the report from 10 million recorded scopes: without files
// (BM_BuildReport10M), and with the trace and the summary written (BM_WriteTrace10M).
//
//   ./report_benchmark [--benchmark_format=json]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "paddle_prof/paddle_prof.h"

namespace {

constexpr int kOps = 8;
const char* const kOpNames[kOps] = {"conv2d", "relu",    "batch_norm", "pool2d",
                                    "matmul", "softmax", "dropout",    "elementwise_add"};

// Opens a window holding `scopes` calls: a step scope around groups of eight nested op
// scopes, two levels, as in training.
void RecordScopes(int64_t scopes) {
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int64_t i = 0; i < scopes; i += kOps + 1) {
    paddle_prof::RecordEvent step("train_step");
    for (int op = 0; op < kOps; ++op) paddle_prof::RecordEvent e(kOpNames[op]);
  }
}

void BM_BuildReport10M(benchmark::State& state) {
  const int64_t scopes = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    RecordScopes(scopes);
    state.ResumeTiming();
    paddle_prof::Report report = paddle_prof::StopProfiler();
    benchmark::DoNotOptimize(report);
  }
  state.counters["scopes"] = static_cast<double>(scopes);
}
BENCHMARK(BM_BuildReport10M)->Arg(10000000)->Unit(benchmark::kMillisecond)->Iterations(3);

// The report, the Chrome trace and the summary: what StopProfiler(key, path) does.
void BM_WriteTrace10M(benchmark::State& state) {
  const int64_t scopes = state.range(0);
  const std::string path = "/tmp/paddle_prof_bm_trace." + std::to_string(getpid()) + ".json";
  double bytes_per_event = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RecordScopes(scopes);
    state.ResumeTiming();
    paddle_prof::Report report =
        paddle_prof::StopProfiler(paddle_prof::EventSortingKey::kTotal, path);
    state.PauseTiming();
    int64_t calls = 0;  // one complete event each in the trace
    for (const paddle_prof::EventRow& row : report.events) calls += row.calls;
    // The whole file over its complete events: metadata, steps and counters included.
    bytes_per_event = static_cast<double>(std::filesystem::file_size(path)) / calls;
    std::remove(path.c_str());
    std::remove((path + ".summary.json").c_str());
    state.ResumeTiming();
  }
  state.counters["scopes"] = static_cast<double>(scopes);
  state.counters["bytes_per_event"] = bytes_per_event;
}
BENCHMARK(BM_WriteTrace10M)->Arg(10000000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
