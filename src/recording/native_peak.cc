#include "native_peak.h"

#include <algorithm>
#include <atomic>

namespace paddle_prof::internal {
namespace {

// {net, peak} as one 16-byte word: lock cmpxchg16b on x86-64 (built with -mcx16), an
// exclusive pair on AArch64.
using Word = unsigned __int128;

alignas(64) Word g_word = 0;
alignas(64) std::atomic<int64_t> g_step_high{0};
// The word as this thread last saw it: its first compare-and-swap succeeds unless
// another thread moved the word since.
thread_local Word t_seen __attribute__((tls_model("initial-exec"))) = 0;

inline Word Pack(int64_t net, int64_t peak) {
  return static_cast<Word>(static_cast<uint64_t>(net)) |
         (static_cast<Word>(static_cast<uint64_t>(peak)) << 64);
}
inline int64_t Net(Word w) { return static_cast<int64_t>(static_cast<uint64_t>(w)); }
inline int64_t Peak(Word w) { return static_cast<int64_t>(static_cast<uint64_t>(w >> 64)); }

// Returns what the word held: `desired` was stored when that equals `expected`.
inline Word CompareAndSwap(Word expected, Word desired) {
  return __sync_val_compare_and_swap(&g_word, expected, desired);
}

inline Word Load() { return CompareAndSwap(t_seen, t_seen); }

}  // namespace

void RestartNativeWindow() {
  Word seen = Load();
  for (Word found; (found = CompareAndSwap(seen, 0)) != seen;) seen = found;
  g_step_high.store(0, std::memory_order_relaxed);
}

NativeMove MoveNativeBytes(int64_t delta) {
  Word seen = t_seen;
  for (;;) {
    const int64_t net = Net(seen) + delta;
    const Word desired = Pack(net, std::max(Peak(seen), net));
    const Word found = CompareAndSwap(seen, desired);
    if (found == seen) {
      t_seen = desired;
      int64_t high = g_step_high.load(std::memory_order_relaxed);
      while (net > high &&
             !g_step_high.compare_exchange_weak(high, net, std::memory_order_relaxed)) {
      }
      return {Peak(seen), Peak(desired)};
    }
    seen = found;
  }
}

int64_t NativeWindowLive() { return Net(Load()); }
int64_t NativeWindowPeak() { return Peak(Load()); }

int64_t NativeStepPeakNow() {
  return std::max(g_step_high.load(std::memory_order_relaxed), NativeWindowLive());
}

int64_t TakeNativeStepPeak() {
  const int64_t net = NativeWindowLive();
  return std::max(g_step_high.exchange(net, std::memory_order_relaxed), net);
}

}  // namespace paddle_prof::internal
