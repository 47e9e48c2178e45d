// The profiler's clock: the CPU's time-stamp counter where it is invariant (a read
// costs about 10 ns), else steady_clock in nanoseconds. Ticks are converted to time
// with a rate calibrated against CLOCK_MONOTONIC over the process's lifetime, so a
// window's bounds and its events are measured on the same clock.
#ifndef PADDLE_PROF_SRC_CLOCK_H_
#define PADDLE_PROF_SRC_CLOCK_H_

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PADDLE_PROF_HAS_TSC 1
#endif

namespace paddle_prof::internal {

uint64_t MonotonicNs();

class Clock {
 public:
  // Chooses the tick source and takes the calibration anchor; idempotent.
  static void Init();
  static uint64_t Now() {
#ifdef PADDLE_PROF_HAS_TSC
    if (use_tsc_.load(std::memory_order_relaxed)) return __rdtsc();
#endif
    return MonotonicNs();
  }
  // Now(), callable from outside the library (tests), which cannot see use_tsc_.
  static uint64_t NowOutOfLine();
  static bool UsesTsc() { return use_tsc_.load(std::memory_order_relaxed); }
  // Another clock's reading (`read_other()`) paired with the tick of the same moment:
  // ticks are read around it and the tightest of a few tries is kept, so that a
  // preemption in between cannot skew the pairing.
  template <typename ReadOther>
  static void ReadPaired(ReadOther read_other, uint64_t* other, uint64_t* tick) {
    uint64_t best = ~uint64_t{0};
    for (int i = 0; i < 8; ++i) {
      const uint64_t before = Now();
      const uint64_t reading = read_other();
      const uint64_t after = Now();
      if (after - before < best) {
        best = after - before;
        *other = reading;
        *tick = before + (after - before) / 2;
      }
    }
  }
  // Nanoseconds per tick, measured from Init() to now (waits up to 1 ms when Init()
  // was too recent for a precise rate).
  static double NsPerTick();

 private:
  // Hidden: read inside the library only, directly rather than through the GOT.
  __attribute__((visibility("hidden"))) static std::atomic<bool> use_tsc_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CLOCK_H_
