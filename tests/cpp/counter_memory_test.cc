// Memory known only by an allocator's counters (bytes in use, high-water mark), read at
// op boundaries as the torch bridge does on a CUDA torch without per-block hooks: exact
// bytes where the counters allow it, and the limits where they do not.
#include "counter_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::CounterMemory;
using testing::Row;

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

// What an allocator such as PyTorch's CUDA cache counts.
struct Counters {
  int64_t in_use = 0;
  int64_t peak = 0;

  void Alloc(int64_t bytes) {
    in_use += bytes;
    peak = std::max(peak, in_use);
  }
  void Free(int64_t bytes) { in_use -= bytes; }
};

// An op as the bridge sees it: the counters read as it begins (before its event opens)
// and as it ends (before its event closes).
class Op {
 public:
  Op(const char* name, CounterMemory* memory, const Counters* counters)
      : memory_(memory), counters_(counters) {
    memory_->Observe(counters_->in_use, counters_->peak);
    event_.emplace(name);
  }
  ~Op() {
    memory_->Observe(counters_->in_use, counters_->peak);
    event_.reset();
  }

 private:
  CounterMemory* memory_;
  const Counters* counters_;
  std::optional<RecordEvent> event_;
};

const MemoryStats& On(const EventRow& row, const std::string& place) {
  static const MemoryStats kNone;
  const auto it = row.memory.find(place);
  return it != row.memory.end() ? it->second : kNone;
}

const PlaceSummary& PlaceOf(const Report& report, const std::string& name) {
  for (const PlaceSummary& p : report.places) {
    if (p.place == name) return p;
  }
  ADD_FAILURE() << "no place " << name;
  static const PlaceSummary kNone;
  return kNone;
}

TEST(CounterMemoryTest, FillConstantReadsItsExactSize) {
  Counters gpu;
  CounterMemory memory(CUDAPlace(0));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  {
    Op op("fill_constant", &memory, &gpu);
    gpu.Alloc(1000 * 784 * sizeof(float));
  }
  const Report report = StopProfiler();
  const MemoryStats& m = On(Row(report, "fill_constant"), "CUDA:0");
  EXPECT_EQ(m.peak_bytes, 3136000);
  EXPECT_EQ(m.alloc_bytes, 3136000);
  EXPECT_EQ(m.alloc_count, 1);
  EXPECT_EQ(m.live_bytes, 3136000);
  EXPECT_EQ(m.free_count, 0);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes - PlaceOf(report, "CUDA:0").start_bytes, 3136000);
}

// The reviewers' conv: a 1 MiB im2col buffer freed before the op returns is its peak,
// although the counters were never read while it was allocated.
TEST(CounterMemoryTest, ATemporaryThatSetsANewHighIsThePeak) {
  Counters gpu;
  gpu.Alloc(3 * kMiB);  // weights, from before the profile
  CounterMemory memory(CUDAPlace(1));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  {
    Op op("conv2d", &memory, &gpu);
    gpu.Alloc(kMiB);
    gpu.Alloc(256 * kKiB);
    gpu.Free(kMiB);
  }
  const Report report = StopProfiler();
  const MemoryStats& m = On(Row(report, "conv2d"), "CUDA:1");
  EXPECT_EQ(m.peak_bytes, 1310720);
  EXPECT_EQ(m.alloc_bytes - m.free_bytes, 262144);
  EXPECT_EQ(m.live_bytes, 262144);
  EXPECT_EQ(m.free_bytes, kMiB);
  const PlaceSummary& place = PlaceOf(report, "CUDA:1");
  EXPECT_EQ(place.start_bytes, 3 * kMiB);
  EXPECT_EQ(place.end_bytes, 3 * kMiB + 256 * kKiB);
  EXPECT_EQ(place.peak_bytes, 4 * kMiB + 256 * kKiB);
  EXPECT_EQ(place.untracked_frees, 0);
  EXPECT_EQ(memory.held_bytes(), gpu.in_use);
}

// Under an older high mark the counters cannot see a temporary: the peak reads as the
// growth that was seen (a lower bound), never more.
TEST(CounterMemoryTest, ATemporaryUnderAnOldHighIsNotSeen) {
  Counters gpu;
  gpu.Alloc(10 * kMiB);
  gpu.Free(10 * kMiB);
  CounterMemory memory(CUDAPlace(2));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  {
    Op op("relu", &memory, &gpu);
    gpu.Alloc(2 * kMiB);
    gpu.Alloc(kMiB);
    gpu.Free(2 * kMiB);
  }
  const Report report = StopProfiler();
  const MemoryStats& m = On(Row(report, "relu"), "CUDA:2");
  EXPECT_EQ(m.peak_bytes, kMiB);
  EXPECT_EQ(m.live_bytes, kMiB);
}

// Nested ops see what their children saw, and the parent's peak keeps the moment
// its child's temporary was allocated.
TEST(CounterMemoryTest, NestedOpsFoldIntoTheirParent) {
  Counters gpu;
  CounterMemory memory(CUDAPlace(3));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  {
    Op linear("linear", &memory, &gpu);
    gpu.Alloc(kKiB);  // a contiguous copy of the weight, before the child starts
    {
      Op addmm("addmm", &memory, &gpu);
      gpu.Alloc(4 * kKiB);  // workspace
      gpu.Alloc(2 * kKiB);  // output
      gpu.Free(4 * kKiB);
    }
  }
  const Report report = StopProfiler();
  const MemoryStats& addmm = On(Row(report, "addmm"), "CUDA:3");
  EXPECT_EQ(addmm.peak_bytes, 6 * kKiB);
  EXPECT_EQ(addmm.live_bytes, 2 * kKiB);
  const MemoryStats& linear = On(Row(report, "linear"), "CUDA:3");
  EXPECT_EQ(linear.peak_bytes, 7 * kKiB);
  EXPECT_EQ(linear.alloc_bytes, 7 * kKiB);
  EXPECT_EQ(linear.free_bytes, 4 * kKiB);
  EXPECT_EQ(linear.live_bytes, kKiB);  // its own block; addmm's output stays addmm's
}

// Shrinkage frees the newest blocks first; an older block that is partly freed shrinks
// in place and keeps its owner, so the op that frees is not charged an allocation.
TEST(CounterMemoryTest, FreesTakeTheNewestBlocksAndShrinkOlderOnesInPlace) {
  Counters gpu;
  gpu.Alloc(4 * kMiB);
  CounterMemory memory(CUDAPlace(0));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  {
    Op forward("forward", &memory, &gpu);
    gpu.Alloc(kMiB);  // an activation
  }
  {
    Op backward("backward", &memory, &gpu);
    gpu.Free(kMiB + 512 * kKiB);  // the activation and part of what was there before
  }
  const Report report = StopProfiler();
  const MemoryStats& forward = On(Row(report, "forward"), "CUDA:0");
  EXPECT_EQ(forward.alloc_bytes, kMiB);
  EXPECT_EQ(forward.live_bytes, 0);
  const MemoryStats& backward = On(Row(report, "backward"), "CUDA:0");
  EXPECT_EQ(backward.free_bytes, kMiB + 512 * kKiB);
  EXPECT_EQ(backward.free_count, 2);
  EXPECT_EQ(backward.alloc_count, 0);
  EXPECT_EQ(backward.live_bytes, 0);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes, 4 * kMiB - 512 * kKiB);
  EXPECT_EQ(memory.held_bytes(), gpu.in_use);
}

// A program that resets the high mark (torch.cuda.reset_peak_memory_stats()) makes it
// read lower; new highs after it are seen again.
TEST(CounterMemoryTest, AResetHighMarkIsTakenAsItIs) {
  Counters gpu;
  gpu.Alloc(8 * kMiB);
  gpu.Free(8 * kMiB);
  CounterMemory memory(CUDAPlace(1));
  memory.Observe(gpu.in_use, gpu.peak);
  EnableProfiler(ProfilerState::kCPU);
  gpu.peak = gpu.in_use;  // the reset
  {
    Op op("matmul", &memory, &gpu);
    gpu.Alloc(2 * kMiB);
    gpu.Free(2 * kMiB);
  }
  {
    Op op("softmax", &memory, &gpu);
    gpu.Alloc(3 * kMiB);
    gpu.Free(3 * kMiB);
  }
  const Report report = StopProfiler();
  // The reset happened before matmul's first read, so matmul's 2 MiB is seen as well.
  EXPECT_EQ(On(Row(report, "matmul"), "CUDA:1").peak_bytes, 2 * kMiB);
  EXPECT_EQ(On(Row(report, "softmax"), "CUDA:1").peak_bytes, 3 * kMiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:1").end_bytes, 0);
}

// Threads that run ops read the same counters: the blocks always add up to the last
// read, whatever the order the reads are taken in.
TEST(CounterMemoryTest, ReadsFromManyThreadsStayConsistent) {
  CounterMemory memory(CUDAPlace(2));
  memory.Observe(0, 0);
  EnableProfiler(ProfilerState::kCPU);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memory, t] {
      for (int i = 0; i < 2000; ++i) {
        const int64_t in_use = ((i * 7 + t * 13) % 50) * kKiB;
        RecordEvent e("op");
        memory.Observe(in_use, 64 * kKiB + i);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  memory.Observe(5 * kKiB, 70 * kKiB);
  const Report report = StopProfiler();
  EXPECT_EQ(memory.held_bytes(), 5 * kKiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:2").end_bytes, 5 * kKiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:2").untracked_frees, 0);
}

}  // namespace
}  // namespace paddle_prof
