// Building the report from 10 million recorded scopes: without files
// (BM_BuildReport10M), and with the trace and the summary written (BM_WriteTrace10M);
// from 20,000 small ops that each allocate and free (BM_BuildReportSmallOps, and with
// memory categories, as paddle_prof.torch has them: BM_BuildReportSmallOpsCategorised);
// a flight-recorder window of a million steps, whose memory must stay flat
// (BM_FlightRecorder1MSteps); and a summary of 500 rows read back, as merges read each
// rank's (BM_ReadSummary500Rows).
//
//   ./report_benchmark [--benchmark_format=json]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "event_buffer.h"
#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "profiler_control.h"
#include "summary_reader.h"

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

// The report of a small-op loop, as torch_op_overhead.py's: 20,000 scopes, each
// allocating a 32-byte tensor through a TrackingAllocator and freeing the one before,
// over a few thousand addresses. Per op: what the stop adds to each op's cost.
void RunSmallOps(benchmark::State& state, bool categorised) {
  const int64_t ops = state.range(0);
  paddle_prof::TrackingAllocator cpu(paddle_prof::CPUAllocator(), paddle_prof::CPUPlace());
  for (auto _ : state) {
    state.PauseTiming();
    paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
    if (categorised) paddle_prof::internal::SetMemoryCategories(true);  // for this window
    void* previous = nullptr;
    for (int64_t i = 0; i < ops; ++i) {
      paddle_prof::RecordEvent op("aten::add");
      void* out = cpu.Allocate(32);
      if (previous != nullptr) cpu.Free(previous);
      previous = out;
    }
    cpu.Free(previous);
    state.ResumeTiming();
    paddle_prof::Report report = paddle_prof::StopProfiler();
    benchmark::DoNotOptimize(report);
  }
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}
void BM_BuildReportSmallOps(benchmark::State& state) { RunSmallOps(state, false); }
BENCHMARK(BM_BuildReportSmallOps)->Arg(20000)->Unit(benchmark::kMicrosecond);

// The same with memory categories on, as paddle_prof.torch's windows have them: each
// block's category from its allocation's phase and the outermost op around it.
void BM_BuildReportSmallOpsCategorised(benchmark::State& state) { RunSmallOps(state, true); }
BENCHMARK(BM_BuildReportSmallOpsCategorised)->Arg(20000)->Unit(benchmark::kMicrosecond);

// keep_last_steps=5 over a million steps of nine scopes each: the time per step (its
// scopes and its mark) and the record chunks in use after 10,000 steps and at the end.
void BM_FlightRecorder1MSteps(benchmark::State& state) {
  const int64_t steps = state.range(0);
  double chunks_early = 0;
  double chunks_end = 0;
  for (auto _ : state) {
    FLAGS_paddle_prof_keep_last_steps = 5;
    paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
    for (int64_t step = 0; step < steps; ++step) {
      {
        paddle_prof::RecordEvent train_step("train_step");
        for (int op = 0; op < kOps; ++op) paddle_prof::RecordEvent e(kOpNames[op]);
      }
      paddle_prof::MarkStep();
      if (step == 10000) {
        chunks_early = static_cast<double>(paddle_prof::internal::EventBuffer::ChunksInUse());
      }
    }
    chunks_end = static_cast<double>(paddle_prof::internal::EventBuffer::ChunksInUse());
    state.PauseTiming();
    paddle_prof::Report report = paddle_prof::StopProfiler();
    benchmark::DoNotOptimize(report);
    FLAGS_paddle_prof_keep_last_steps = 0;
    state.ResumeTiming();
  }
  state.counters["chunks_after_10k_steps"] = chunks_early;
  state.counters["chunks_at_the_end"] = chunks_end;
  state.counters["ns_per_step"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}
BENCHMARK(BM_FlightRecorder1MSteps)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

// The summary merge_ranks.py merges 1,024 of: 500 rows that each allocate, over 10 steps.
void BM_ReadSummary500Rows(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  paddle_prof::TrackingAllocator cpu(paddle_prof::CPUAllocator(), paddle_prof::CPUPlace());
  std::vector<std::string> names;
  for (int i = 0; i < rows; ++i) names.push_back("op_" + std::to_string(i));
  paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
  for (int step = 0; step < 10; ++step) {
    for (int i = 0; i < rows; ++i) {
      paddle_prof::RecordEvent e(names[i]);
      cpu.Free(cpu.Allocate(256 + 4 * i));
    }
    paddle_prof::MarkStep();
  }
  const std::string text = paddle_prof::StopProfiler().ToJson();
  for (auto _ : state) {
    paddle_prof::Report report = paddle_prof::internal::ReportFromJson(text, "summary");
    benchmark::DoNotOptimize(report);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["summary_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ReadSummary500Rows)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
