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

// A (CLOCK_MONOTONIC, TSC) pair read as close together as can be: the TSC is read
// around clock_gettime and the tightest of a few tries is kept, so that a preemption
// in between cannot skew the calibration.
void ReadPair(uint64_t* ns, uint64_t* ticks) {
  uint64_t best = ~uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const uint64_t before = Clock::Now();
    const uint64_t now_ns = MonotonicNs();
    const uint64_t after = Clock::Now();
    if (after - before < best) {
      best = after - before;
      *ns = now_ns;
      *ticks = before + (after - before) / 2;
    }
  }
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
    ReadPair(&g_anchor.ns, &g_anchor.ticks);
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
    ReadPair(&ns, &ticks);
  } while (ns - g_anchor.ns < kMinBaselineNs || ticks <= g_anchor.ticks);
  return static_cast<double>(ns - g_anchor.ns) / static_cast<double>(ticks - g_anchor.ticks);
}

uint64_t Clock::NowOutOfLine() { return Now(); }

}  // namespace paddle_prof::internal
