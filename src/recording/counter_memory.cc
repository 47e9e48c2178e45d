#include "counter_memory.h"

#include <algorithm>
#include <atomic>

#include "memory_tracker.h"
#include "native_guard.h"
#include "place_registry.h"

namespace paddle_prof::internal {

namespace {

// The blocks need addresses no real block can have: the kernel's half of the address
// space (x86-64 and AArch64 alike) is never handed to a process, neither by malloc nor
// by CUDA. The tracker only hashes them. Each CounterMemory has a range of its own.
constexpr uintptr_t kCounterBlockBase = 0xffffc00000000000u;
constexpr int kDepthBits = 36;

std::atomic<uintptr_t> g_next_range{0};

}  // namespace

CounterMemory::CounterMemory(Place place)
    : place_(PlaceIndex(place)),
      base_(kCounterBlockBase +
            (g_next_range.fetch_add(1, std::memory_order_relaxed) << kDepthBits)) {}

int64_t CounterMemory::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

const void* CounterMemory::Address(size_t depth) const {
  return reinterpret_cast<const void*>(base_ + depth);
}

void CounterMemory::Observe(int64_t in_use, int64_t peak) {
  if (place_ < 0) return;
  NativeGuard not_the_programs;  // held_ grows: the profiler's own memory
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t before = in_use_;
  // The most in use between the two reads: the new high mark if there is one. (A mark
  // reset by the program reads lower than before and is just taken.)
  const int64_t high = !first_ && peak > peak_ ? peak : std::max(before, in_use);
  first_ = false;
  peak_ = peak;
  in_use_ = in_use;
  const int64_t kept = std::max(before, in_use);
  if (in_use > before) Grow(in_use - before);
  if (high > kept) {  // came and went
    Grow(high - kept);
    Shrink(high - kept);
  }
  if (in_use < before) Shrink(before - in_use);
}

void CounterMemory::Grow(int64_t bytes) {
  held_.push_back(bytes);
  TrackAlloc(place_, Address(held_.size() - 1), static_cast<size_t>(bytes));
}

void CounterMemory::Shrink(int64_t bytes) {
  while (bytes > 0 && !held_.empty()) {
    const void* top = Address(held_.size() - 1);
    if (held_.back() <= bytes) {
      bytes -= held_.back();
      held_.pop_back();
      TrackFree(place_, top);
    } else {
      held_.back() -= bytes;
      TrackShrink(top, bytes);
      bytes = 0;
    }
  }
}

}  // namespace paddle_prof::internal
