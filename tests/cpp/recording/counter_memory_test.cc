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
using testing::kMiB;
using testing::MemoryOn;
using testing::PlaceOf;
using testing::Row;

constexpr int64_t kKiB = 1024;

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

class CounterMemoryTest : public ::testing::Test {
 protected:
  // The first read takes what the program holds already; then the window opens.
  void StartProfile() {
    memory_.Observe(gpu_.in_use, gpu_.peak);
    EnableProfiler(ProfilerState::kCPU);
  }
  // The op's figures on the counted place.
  static const MemoryStats& Gpu(const Report& report, const std::string& op) {
    return MemoryOn(Row(report, op), "CUDA:0");
  }

  Counters gpu_;
  CounterMemory memory_{CUDAPlace(0)};
};

TEST_F(CounterMemoryTest, FillConstantReadsItsExactSize) {
  StartProfile();
  {
    Op op("fill_constant", &memory_, &gpu_);
    gpu_.Alloc(1000 * 784 * sizeof(float));
  }
  const Report report = StopProfiler();
  const MemoryStats& m = Gpu(report, "fill_constant");
  EXPECT_EQ(m.peak_bytes, 3136000);
  EXPECT_EQ(m.alloc_bytes, 3136000);
  EXPECT_EQ(m.alloc_count, 1);
  EXPECT_EQ(m.live_bytes, 3136000);
  EXPECT_EQ(m.free_count, 0);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes - PlaceOf(report, "CUDA:0").start_bytes, 3136000);
}

// The reviewers' conv: a 1 MiB im2col buffer freed before the op returns is its peak,
// although the counters were never read while it was allocated.
TEST_F(CounterMemoryTest, ATemporaryThatSetsANewHighIsThePeak) {
  gpu_.Alloc(3 * kMiB);  // weights, from before the profile
  StartProfile();
  {
    Op op("conv2d", &memory_, &gpu_);
    gpu_.Alloc(kMiB);
    gpu_.Alloc(256 * kKiB);
    gpu_.Free(kMiB);
  }
  const Report report = StopProfiler();
  const MemoryStats& m = Gpu(report, "conv2d");
  EXPECT_EQ(m.peak_bytes, 1310720);
  EXPECT_EQ(m.alloc_bytes - m.free_bytes, 262144);
  EXPECT_EQ(m.live_bytes, 262144);
  EXPECT_EQ(m.free_bytes, kMiB);
  const PlaceSummary& place = PlaceOf(report, "CUDA:0");
  EXPECT_EQ(place.start_bytes, 3 * kMiB);
  EXPECT_EQ(place.end_bytes, 3 * kMiB + 256 * kKiB);
  EXPECT_EQ(place.peak_bytes, 4 * kMiB + 256 * kKiB);
  EXPECT_EQ(place.untracked_frees, 0);
  EXPECT_EQ(memory_.held_bytes(), gpu_.in_use);
}

// Under an older high mark the counters cannot see a temporary: the peak reads as the
// growth that was seen (a lower bound), never more.
TEST_F(CounterMemoryTest, ATemporaryUnderAnOldHighIsNotSeen) {
  gpu_.Alloc(10 * kMiB);
  gpu_.Free(10 * kMiB);
  StartProfile();
  {
    Op op("relu", &memory_, &gpu_);
    gpu_.Alloc(2 * kMiB);
    gpu_.Alloc(kMiB);
    gpu_.Free(2 * kMiB);
  }
  const Report report = StopProfiler();
  const MemoryStats& m = Gpu(report, "relu");
  EXPECT_EQ(m.peak_bytes, kMiB);
  EXPECT_EQ(m.live_bytes, kMiB);
}

// Nested ops see what their children saw, and the parent's peak keeps the moment
// its child's temporary was allocated.
TEST_F(CounterMemoryTest, NestedOpsFoldIntoTheirParent) {
  StartProfile();
  {
    Op linear("linear", &memory_, &gpu_);
    gpu_.Alloc(kKiB);  // a contiguous copy of the weight, before the child starts
    {
      Op addmm("addmm", &memory_, &gpu_);
      gpu_.Alloc(4 * kKiB);  // workspace
      gpu_.Alloc(2 * kKiB);  // output
      gpu_.Free(4 * kKiB);
    }
  }
  const Report report = StopProfiler();
  const MemoryStats& addmm = Gpu(report, "addmm");
  EXPECT_EQ(addmm.peak_bytes, 6 * kKiB);
  EXPECT_EQ(addmm.live_bytes, 2 * kKiB);
  const MemoryStats& linear = Gpu(report, "linear");
  EXPECT_EQ(linear.peak_bytes, 7 * kKiB);
  EXPECT_EQ(linear.alloc_bytes, 7 * kKiB);
  EXPECT_EQ(linear.free_bytes, 4 * kKiB);
  EXPECT_EQ(linear.live_bytes, kKiB);  // its own block; addmm's output stays addmm's
}

// Shrinkage frees the newest blocks first; an older block that is partly freed shrinks
// in place and keeps its owner, so the op that frees is not charged an allocation.
TEST_F(CounterMemoryTest, FreesTakeTheNewestBlocksAndShrinkOlderOnesInPlace) {
  gpu_.Alloc(4 * kMiB);
  StartProfile();
  {
    Op forward("forward", &memory_, &gpu_);
    gpu_.Alloc(kMiB);  // an activation
  }
  {
    Op backward("backward", &memory_, &gpu_);
    gpu_.Free(kMiB + 512 * kKiB);  // the activation and part of what was there before
  }
  const Report report = StopProfiler();
  const MemoryStats& forward = Gpu(report, "forward");
  EXPECT_EQ(forward.alloc_bytes, kMiB);
  EXPECT_EQ(forward.live_bytes, 0);
  const MemoryStats& backward = Gpu(report, "backward");
  EXPECT_EQ(backward.free_bytes, kMiB + 512 * kKiB);
  EXPECT_EQ(backward.free_count, 2);
  EXPECT_EQ(backward.alloc_count, 0);
  EXPECT_EQ(backward.live_bytes, 0);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes, 4 * kMiB - 512 * kKiB);
  EXPECT_EQ(memory_.held_bytes(), gpu_.in_use);
}

// A program that resets the high mark (torch.cuda.reset_peak_memory_stats()) makes it
// read lower; new highs after it are seen again.
TEST_F(CounterMemoryTest, AResetHighMarkIsTakenAsItIs) {
  gpu_.Alloc(8 * kMiB);
  gpu_.Free(8 * kMiB);
  StartProfile();
  gpu_.peak = gpu_.in_use;  // the reset
  {
    Op op("matmul", &memory_, &gpu_);
    gpu_.Alloc(2 * kMiB);
    gpu_.Free(2 * kMiB);
  }
  {
    Op op("softmax", &memory_, &gpu_);
    gpu_.Alloc(3 * kMiB);
    gpu_.Free(3 * kMiB);
  }
  const Report report = StopProfiler();
  // The reset happened before matmul's first read, so matmul's 2 MiB is seen as well.
  EXPECT_EQ(Gpu(report, "matmul").peak_bytes, 2 * kMiB);
  EXPECT_EQ(Gpu(report, "softmax").peak_bytes, 3 * kMiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes, 0);
}

// Threads that run ops read the same counters: the blocks always add up to the last
// read, whatever the order the reads are taken in.
TEST_F(CounterMemoryTest, ReadsFromManyThreadsStayConsistent) {
  StartProfile();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 2000; ++i) {
        const int64_t in_use = ((i * 7 + t * 13) % 50) * kKiB;
        RecordEvent e("op");
        memory_.Observe(in_use, 64 * kKiB + i);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  memory_.Observe(5 * kKiB, 70 * kKiB);
  const Report report = StopProfiler();
  EXPECT_EQ(memory_.held_bytes(), 5 * kKiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").end_bytes, 5 * kKiB);
  EXPECT_EQ(PlaceOf(report, "CUDA:0").untracked_frees, 0);
}

}  // namespace
}  // namespace paddle_prof
