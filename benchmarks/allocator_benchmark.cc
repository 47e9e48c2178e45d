// The cost of tracking an allocation/free pair, against the base allocator alone.
//
//   ./allocator_benchmark [--benchmark_format=json]
//
// BM_TrackedAllocFree runs with profiling on, inside a scope (the op's), in the steady
// state of a long loop: ResetProfiler() rewinds the recorders off the clock every
// kPairsPerWindow pairs. BM_TrackedAllocFreeNoTimeline is the same without the memory
// timeline (FLAGS_paddle_prof_memory_timeline=false: no at_peak, no trace counters).
// BM_RecordAllocFree is a framework's own allocator reporting through RecordAlloc/
// RecordFree, which also looks for the address among the live blocks first;
// BM_RecordAllocFreeManyAddresses the same over a million addresses;
// BM_TrackAllocFreeManyAddresses the torch bridge's calls over as many.
// BM_WalkLiveBlocksGrownTable is a report's walk of the live blocks in a grown table.
// BM_TrackedAllocFreeCrossThread hands each block to the next benchmark thread, which
// frees it: the frees of a data-loading or pin-memory thread's blocks.
// BM_Counter* are the torch bridge's CUDA fallback, without the allocator's own read: two
// counter reads with nothing moved (an op that touched no GPU memory), and two that see
// a block come and go (an op's output, freed by the next op).
#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "counter_memory.h"
#include "flags.h"
#include "live_block_table.h"
#include "memory_tracker.h"
#include "paddle_prof/paddle_prof.h"
#include "place_registry.h"
#include "steady_state.h"

namespace {

constexpr int64_t kPairsPerWindow = 1 << 19;
constexpr size_t kBytes = 256;

// The base allocator: a per-thread free list over CPUAllocator(), as a framework's
// caching allocator reuses its blocks. It keeps glibc's heap layout (which makes a bare
// aligned_alloc/free pair cost anywhere from 40 to 300 ns here, run to run) out of the
// figures, so that the tracked benchmarks differ from the raw one by the tracking alone.
class CachingAllocator final : public paddle_prof::Allocator {
 public:
  void* Allocate(size_t bytes) override {
    std::vector<void*>& cache = Cache();
    if (bytes != kBytes || cache.empty()) return base_->Allocate(bytes);
    void* p = cache.back();
    cache.pop_back();
    return p;
  }
  void Free(void* ptr) override { Cache().push_back(ptr); }

 private:
  static std::vector<void*>& Cache() {
    thread_local std::vector<void*> cache;
    return cache;
  }
  std::shared_ptr<paddle_prof::Allocator> base_ = paddle_prof::CPUAllocator();
};

std::shared_ptr<paddle_prof::Allocator> Base() {
  static auto base = std::make_shared<CachingAllocator>();
  return base;
}

void BM_RawAllocFree(benchmark::State& state) {
  const auto base = Base();
  for (auto _ : state) {
    void* p = base->Allocate(kBytes);
    benchmark::DoNotOptimize(p);
    base->Free(p);
  }
}
BENCHMARK(BM_RawAllocFree)->Threads(1)->Threads(2)->Threads(4);

void BM_TrackedAllocFreeProfilerOff(benchmark::State& state) {
  paddle_prof::TrackingAllocator tracked(Base(), paddle_prof::CPUPlace());
  for (auto _ : state) {
    void* p = tracked.Allocate(kBytes);
    benchmark::DoNotOptimize(p);
    tracked.Free(p);
  }
}
BENCHMARK(BM_TrackedAllocFreeProfilerOff)->Threads(1)->Threads(2)->Threads(4);

void RunTracked(benchmark::State& state) {
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::TrackingAllocator tracked(Base(), paddle_prof::CPUPlace());
  paddle_prof::RecordEvent op("op");
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&tracked] {
    void* p = tracked.Allocate(kBytes);
    benchmark::DoNotOptimize(p);
    tracked.Free(p);
  });
}

void BM_TrackedAllocFree(benchmark::State& state) { RunTracked(state); }
BENCHMARK(BM_TrackedAllocFree)->Threads(1)->Threads(2)->Threads(4);

void BM_TrackedAllocFreeNoTimeline(benchmark::State& state) {
  FLAGS_paddle_prof_memory_timeline = false;  // read when the window opens
  RunTracked(state);
  FLAGS_paddle_prof_memory_timeline = true;
}
BENCHMARK(BM_TrackedAllocFreeNoTimeline)->Threads(1)->Threads(2)->Threads(4);

// A block each benchmark thread allocated, waiting for the next thread to free it: one
// producer and one consumer per mailbox. A full mailbox's block is freed by its own
// thread, and blocks left at a run's end are freed by the next run's consumer.
struct alignas(64) Mailbox {
  static constexpr size_t kSlots = 256;
  std::atomic<size_t> head{0};  // the consumer's
  alignas(64) std::atomic<size_t> tail{0};  // the producer's
  alignas(64) std::array<void*, kSlots> slots{};

  bool Push(void* p) {
    const size_t t = tail.load(std::memory_order_relaxed);
    if (t - head.load(std::memory_order_acquire) == kSlots) return false;
    slots[t % kSlots] = p;
    tail.store(t + 1, std::memory_order_release);
    return true;
  }
  void* Pop() {
    const size_t h = head.load(std::memory_order_relaxed);
    if (h == tail.load(std::memory_order_acquire)) return nullptr;
    void* p = slots[h % kSlots];
    head.store(h + 1, std::memory_order_release);
    return p;
  }
};
std::array<Mailbox, 4> g_mailboxes;

void BM_TrackedAllocFreeCrossThread(benchmark::State& state) {
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::TrackingAllocator tracked(Base(), paddle_prof::CPUPlace());
  paddle_prof::RecordEvent op("op");
  const int self = state.thread_index();
  Mailbox& out = g_mailboxes[self];
  Mailbox& in = g_mailboxes[(self + state.threads() - 1) % state.threads()];
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&] {
    void* p = tracked.Allocate(kBytes);
    benchmark::DoNotOptimize(p);
    if (!out.Push(p)) tracked.Free(p);
    if (void* theirs = in.Pop()) tracked.Free(theirs);
  });
}
BENCHMARK(BM_TrackedAllocFreeCrossThread)->Threads(1)->Threads(2)->Threads(4);

void BM_RecordAllocFree(benchmark::State& state) {
  paddle_prof::benchmarks::OpenWindowForRun();
  const auto base = Base();
  paddle_prof::RecordEvent op("op");
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&base] {
    void* p = base->Allocate(kBytes);
    paddle_prof::RecordAlloc(paddle_prof::CPUPlace(), p, kBytes);
    benchmark::DoNotOptimize(p);
    paddle_prof::RecordFree(paddle_prof::CPUPlace(), p);
    base->Free(p);
  });
}
BENCHMARK(BM_RecordAllocFree)->Threads(1)->Threads(2)->Threads(4);

// As a heap hands out addresses over a long run: each pair at another of a million
// addresses (never dereferenced), one block live at a time. Every RecordAlloc looks for
// an address that is not live, past what earlier frees left in the table.
void BM_RecordAllocFreeManyAddresses(benchmark::State& state) {
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::RecordEvent op("op");
  uintptr_t next = 0;
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&next] {
    next = (next + 1) % (1 << 20);
    const void* p = reinterpret_cast<const void*>((uintptr_t{1} << 40) + next * kBytes);
    paddle_prof::RecordAlloc(paddle_prof::CPUPlace(), p, kBytes);
    paddle_prof::RecordFree(paddle_prof::CPUPlace(), p);
  });
}
BENCHMARK(BM_RecordAllocFreeManyAddresses);

// The torch bridge's pair (TrackAlloc/TrackFree, no lookup first) as a small-op loop
// makes it: each block at the next of a million addresses 192 bytes apart, freed once
// the next one is allocated, so that every allocation takes a slot it has not touched
// lately.
void BM_TrackAllocFreeManyAddresses(benchmark::State& state) {
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::RecordEvent op("op");
  const int cpu = paddle_prof::internal::PlaceIndex(paddle_prof::CPUPlace());
  uintptr_t next = 0;
  const void* previous = nullptr;
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&] {
    next = (next + 1) % (1 << 20);
    const void* p = reinterpret_cast<const void*>((uintptr_t{1} << 40) + next * 192);
    paddle_prof::internal::TrackAlloc(cpu, p, kBytes);
    paddle_prof::internal::TrackFree(cpu, previous);
    previous = p;
  });
}
BENCHMARK(BM_TrackAllocFreeManyAddresses);

// What a report's walk of the live blocks costs (CollectThreads) once a table has grown:
// a table of a million slots that once held half a million blocks, 1,000 still live.
void BM_WalkLiveBlocksGrownTable(benchmark::State& state) {
  paddle_prof::internal::BlockTable table(size_t{1} << 20);
  paddle_prof::internal::LiveBlock block;
  block.size = kBytes;
  const auto address = [](int64_t i) { return reinterpret_cast<const void*>((i + 1) * 64); };
  constexpr int64_t kOnce = 500000, kLive = 1000;
  for (int64_t i = 0; i < kOnce; ++i) table.Insert(address(i), block);
  for (int64_t i = kLive; i < kOnce; ++i) table.Remove(address(i), &block, /*owner=*/true);
  for (auto _ : state) {
    int64_t live = 0;
    table.ForEach([&live](const paddle_prof::internal::LiveBlock& b) { live += b.size; });
    benchmark::DoNotOptimize(live);
    if (live != kLive * kBytes) state.SkipWithError("the walk lost blocks");
  }
}
BENCHMARK(BM_WalkLiveBlocksGrownTable)->Unit(benchmark::kMicrosecond);

void BM_CounterReadsNothingMoved(benchmark::State& state) {
  paddle_prof::internal::CounterMemory memory(paddle_prof::CUDAPlace(0));
  memory.Observe(kBytes, kBytes);
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::RecordEvent op("op");
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&memory] {
    memory.Observe(kBytes, kBytes);
    memory.Observe(kBytes, kBytes);
  });
}
BENCHMARK(BM_CounterReadsNothingMoved);

void BM_CounterReadsAllocFree(benchmark::State& state) {
  paddle_prof::internal::CounterMemory memory(paddle_prof::CUDAPlace(0));
  memory.Observe(0, 0);
  paddle_prof::benchmarks::OpenWindowForRun();
  paddle_prof::RecordEvent op("op");
  paddle_prof::benchmarks::TimeInSteadyWindow(state, kPairsPerWindow, "faults/pair", [&memory] {
    memory.Observe(kBytes, kBytes);
    memory.Observe(0, kBytes);
  });
}
BENCHMARK(BM_CounterReadsAllocFree);

}  // namespace

BENCHMARK_MAIN();
