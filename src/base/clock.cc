#include "clock.h"

#include <time.h>

#include <mutex>

#ifdef PADDLE_PROF_HAS_TSC
#include <cpuid.h>
#endif

namespace paddle_prof::internal {

std::atomic<bool> Clock::use_tsc_{false};

namespace {

struct Anchor {
  uint64_t ticks = 0;
  uint64_t ns = 0;
};
Anchor g_anchor;
std::once_flag g_init_once;

bool TscIsInvariant() {
#ifdef PADDLE_PROF_HAS_TSC
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;  // "Invariant TSC": constant rate, runs in all C-states
#else
  return false;
#endif
}

}  // namespace

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Clock::Init() {
  std::call_once(g_init_once, [] {
    use_tsc_.store(TscIsInvariant(), std::memory_order_relaxed);
    ReadPaired(&MonotonicNs, &g_anchor.ns, &g_anchor.ticks);
  });
}

double Clock::NsPerTick() {
  Init();
  if (!UsesTsc()) return 1.0;
  // A reading of CLOCK_MONOTONIC is exact to tens of nanoseconds; over a baseline of
  // at least 1 ms the rate is known to better than 1e-4, and it improves as the
  // process lives on.
  constexpr uint64_t kMinBaselineNs = 1000000;
  uint64_t ns, ticks;
  do {
    ReadPaired(&MonotonicNs, &ns, &ticks);
  } while (ns - g_anchor.ns < kMinBaselineNs || ticks <= g_anchor.ticks);
  return static_cast<double>(ns - g_anchor.ns) / static_cast<double>(ticks - g_anchor.ticks);
}

uint64_t Clock::NowOutOfLine() { return Now(); }

}  // namespace paddle_prof::internal
