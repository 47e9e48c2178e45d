// The cost of a RecordEvent scope, disabled and enabled, per thread count.
//
//   ./record_event_benchmark [--benchmark_format=json]
//
// Enabled runs measure the steady state of a long training loop: recorder memory
// was touched by an earlier window and is reused (ResetProfiler() rewinds it off the
// clock every kScopesPerWindow scopes). "faults/scope" counts minor page faults of the
// measuring thread, "B/record" the buffer memory one scope takes.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "clock.h"
#include "event_record.h"
#include "flags.h"
#include "name_interner.h"
#include "own_arena.h"
#include "paddle_prof/paddle_prof.h"
#include "steady_state.h"

namespace {

constexpr int64_t kScopesPerWindow = 1 << 20;  // 32 MiB of records per thread

template <typename Body>
void RunEnabled(benchmark::State& state, Body body) {
  paddle_prof::benchmarks::OpenWindowForRun();
  // Warm the thread's recorder: register it and touch a window's worth of records.
  for (int64_t i = 0; i < kScopesPerWindow; ++i) body();
  paddle_prof::ResetProfiler();
  state.counters["B/record"] = benchmark::Counter(sizeof(paddle_prof::internal::EventRecord),
                                                  benchmark::Counter::kAvgThreads);
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kScopesPerWindow, "faults/scope", body);
}

// The loop alone, for reference: a disabled scope should cost about as much.
void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

// An enabled scope's floor: the two clock reads it takes (the TSC where the CPU has
// one, as the profiler's clock where it is invariant).
void BM_ClockPair(benchmark::State& state) {
  for (auto _ : state) {
#ifdef PADDLE_PROF_HAS_TSC
    benchmark::DoNotOptimize(__rdtsc());
    benchmark::DoNotOptimize(__rdtsc());
#else
    benchmark::DoNotOptimize(paddle_prof::internal::MonotonicNs());
    benchmark::DoNotOptimize(paddle_prof::internal::MonotonicNs());
#endif
  }
}
BENCHMARK(BM_ClockPair);

// No ClobberMemory here: the profiler's flag is an atomic, loaded on every pass anyway.
void BM_RecordEventDisabled(benchmark::State& state) {
  for (auto _ : state) paddle_prof::RecordEvent e("conv2d");
}
BENCHMARK(BM_RecordEventDisabled)->Threads(1)->Threads(2);

void BM_RecordEventEnabled(benchmark::State& state) {
  RunEnabled(state, [] {
    paddle_prof::RecordEvent e("conv2d");
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RecordEventEnabled)->Threads(1)->Threads(2);

// The same scope in a window with a capture directory (capture_dir): the records go to
// files mapped shared, each chunk a new file of the window. The directory is
// $PADDLE_PROF_CAPTURE_BENCHMARK_DIR when set, else a new one under /tmp.
std::string g_flag_before;

void CaptureOn(const benchmark::State&) {
  static const std::string dir = [] {
    if (const char* d = std::getenv("PADDLE_PROF_CAPTURE_BENCHMARK_DIR")) return std::string(d);
    std::string d = "/tmp/paddle_prof_capture_benchmark_XXXXXX";
    return std::string(mkdtemp(d.data()) != nullptr ? d.c_str() : "/tmp");
  }();
  g_flag_before = FLAGS_paddle_prof_capture_dir;
  FLAGS_paddle_prof_capture_dir = dir;
}

void CaptureOff(const benchmark::State&) { FLAGS_paddle_prof_capture_dir = g_flag_before; }

void BM_RecordEventEnabledCapture(benchmark::State& state) {
  RunEnabled(state, [] {
    paddle_prof::RecordEvent e("conv2d");
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RecordEventEnabledCapture)
    ->Setup(CaptureOn)
    ->Teardown(CaptureOff)
    ->Threads(1)
    ->Threads(2);

void BM_RecordEventEnabledDynamicName(benchmark::State& state) {
  const std::string name = "conv2d_grad";  // as a framework's op type string
  RunEnabled(state, [&name] {
    paddle_prof::RecordEvent e(name);
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RecordEventEnabledDynamicName)->Threads(1)->Threads(2);

// The same name as a std::string_view (as the torch bridge and the Python binding pass
// theirs): interned without a std::string made for it.
void BM_RecordEventEnabledStringViewName(benchmark::State& state) {
  const std::string name = "conv2d_grad";
  RunEnabled(state, [&name] {
    paddle_prof::RecordEvent e{std::string_view(name)};
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RecordEventEnabledStringViewName)->Threads(1)->Threads(2);

// A name never seen before on every scope: the intern cache's slow path, and what an
// interned name costs in memory while its window lasts: "own B/name" is the bytes mapped
// for the profiler's arenas per name (the copy and the cache's table, own_arena.h),
// "heap B/name" malloc's bytes in use per name (the cache's bucket array), "copy B/name"
// the copy alone.
void BM_RecordEventEnabledNewNames(benchmark::State& state) {
  using paddle_prof::internal::InternedBytes;
  using paddle_prof::internal::InternedNames;
  paddle_prof::benchmarks::OpenWindowForRun();
  { paddle_prof::RecordEvent warm(std::string("warm")); }  // the recorder exists
  std::string name = "op_type_00000000";                   // as long as a framework's op type
  const int64_t heap = static_cast<int64_t>(mallinfo2().uordblks);
  const int64_t own = paddle_prof::internal::OwnArena::AllMappedBytes();
  const int64_t names = InternedNames(), bytes = InternedBytes();
  int64_t i = 0;
  for (auto _ : state) {
    for (int64_t n = ++i, digit = static_cast<int64_t>(name.size()) - 1; n > 0; n /= 10) {
      name[static_cast<size_t>(digit--)] = static_cast<char>('0' + n % 10);
    }
    paddle_prof::RecordEvent e(name);
    benchmark::ClobberMemory();
  }
  const auto per_name = [&](int64_t total) {
    return static_cast<double>(total) / static_cast<double>(InternedNames() - names);
  };
  state.counters["heap B/name"] = per_name(static_cast<int64_t>(mallinfo2().uordblks) - heap);
  state.counters["own B/name"] = per_name(paddle_prof::internal::OwnArena::AllMappedBytes() - own);
  state.counters["copy B/name"] = per_name(InternedBytes() - bytes);
  paddle_prof::StopProfiler();
}
BENCHMARK(BM_RecordEventEnabledNewNames)->Iterations(1000000);

}  // namespace

BENCHMARK_MAIN();
