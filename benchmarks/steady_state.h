// What the enabled benchmarks share: a profiling window open for the run, a timed loop
// that rewinds the recorders off the clock every so many iterations (the steady state
// of a long training loop, whose recorder memory is reused), and minor page faults per
// iteration beside the nanoseconds.
#ifndef PADDLE_PROF_BENCHMARKS_STEADY_STATE_H_
#define PADDLE_PROF_BENCHMARKS_STEADY_STATE_H_

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <stdexcept>

#include "paddle_prof/paddle_prof.h"

namespace paddle_prof::benchmarks {

inline int64_t MinorFaults() {
  rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Every benchmark thread makes sure the window is open; the first one opens it.
inline void OpenWindowForRun() {
  try {
    EnableProfiler(ProfilerState::kCPU);
  } catch (const std::logic_error&) {
    // Another benchmark thread opened it first.
  }
}

// Times `body` once per iteration, rewinding every `per_window` iterations, and reports
// faults per iteration as `faults_counter`. All threads leave the timed loop together;
// one closes the window.
template <typename Body>
void TimeInSteadyWindow(benchmark::State& state, int64_t per_window, const char* faults_counter,
                        Body body) {
  const int64_t faults_before = MinorFaults();
  int64_t n = 0;
  for (auto _ : state) {
    body();
    if (++n == per_window) {
      state.PauseTiming();
      ResetProfiler();
      n = 0;
      state.ResumeTiming();
    }
  }
  state.counters[faults_counter] = benchmark::Counter(
      static_cast<double>(MinorFaults() - faults_before) / static_cast<double>(state.iterations()),
      benchmark::Counter::kAvgThreads);
  if (state.thread_index() == 0) StopProfiler();
}

}  // namespace paddle_prof::benchmarks

#endif  // PADDLE_PROF_BENCHMARKS_STEADY_STATE_H_
