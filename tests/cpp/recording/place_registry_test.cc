// A place's figures while threads allocate at once: live bytes as the sum of the threads'
// own shares (blocks freed on another thread, threads that exit), the peak found by the
// replay of the memory timeline to the byte, per step too, and without the timeline the
// threads' own high-water marks, exact for one thread and an upper bound, said so, for
// more.
#include "place_registry.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::HasNote;
using testing::kMiB;
using testing::MemoryTest;
using testing::PlaceOf;

// Spins until `count` threads have arrived (C++17 has no std::barrier).
class SpinBarrier {
 public:
  explicit SpinBarrier(int count) : count_(count) {}
  void ArriveAndWait() {
    arrived_.fetch_add(1);
    while (arrived_.load() < count_) std::this_thread::yield();
  }

 private:
  const int count_;
  std::atomic<int> arrived_{0};
};

int64_t AtPeakBytes(const PlaceSummary& place, const std::string& name) {
  int64_t bytes = 0;
  for (const RowBytes& r : place.at_peak) bytes += r.name == name ? r.bytes : 0;
  return bytes;
}

TEST_F(MemoryTest, EachKindOfPlaceIsNamedAndTrackedApart) {
  EXPECT_EQ(PlaceName(CPUPlace()), "CPU");
  EXPECT_EQ(PlaceName(CUDAPlace(3)), "CUDA:3");
  EXPECT_EQ(PlaceName(NativePlace()), "native");
  EXPECT_EQ(PlaceName(CUDAPinnedPlace()), "CUDA_PINNED");
  EXPECT_FALSE(CUDAPinnedPlace() == CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  TrackingAllocator pinned(CPUAllocator(), CUDAPinnedPlace());  // host memory, page-locked
  TrackingAllocator cpu(CPUAllocator(), CPUPlace());
  void* staged = nullptr;
  {
    RecordEvent copy("copy");
    staged = pinned.Allocate(4096);
    cpu.Free(cpu.Allocate(100));
  }
  const Report report = StopProfiler();
  EXPECT_EQ(PlaceOf(report, "CUDA_PINNED").peak_bytes, 4096);
  EXPECT_EQ(PlaceOf(report, "CUDA_PINNED").end_bytes, 4096);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes, 100);
  pinned.Free(staged);
}

// Four threads churn small blocks, then each holds its largest block until all do: that
// moment is the peak. Each largest block is freed by the next thread, while it churns
// again, so the peak is found across threads' frees too.
TEST_F(MemoryTest, FourThreadsHoldingTheirLargestBlocksAtOnceSetThePlacePeakToTheByte) {
  constexpr int kThreads = 4;
  const std::vector<int64_t> largest = {3 * kMiB + 1, 2 * kMiB + 30, kMiB + 500, 700000};
  EnableProfiler(ProfilerState::kCPU);
  SpinBarrier all_hold(kThreads), all_handed(kThreads);
  std::vector<std::atomic<void*>> held(kThreads);
  auto worker = [&](int t) {
    auto churn = [&](int64_t bytes) {
      for (int i = 0; i < 2000; ++i) {
        RecordEvent e("churn");
        cpu_.Free(cpu_.Allocate(static_cast<size_t>(bytes)));
      }
    };
    churn(64 + t);
    {
      RecordEvent e("hold" + std::to_string(t));
      held[t] = cpu_.Allocate(static_cast<size_t>(largest[t]));
    }
    all_hold.ArriveAndWait();
    all_handed.ArriveAndWait();
    cpu_.Free(held[(t + 1) % kThreads].load());  // the next thread's block
    churn(256);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& t : threads) t.join();
  const Report report = StopProfiler();
  const PlaceSummary& cpu = PlaceOf(report, "CPU");
  EXPECT_EQ(cpu.peak_bytes - cpu.start_bytes,
            std::accumulate(largest.begin(), largest.end(), int64_t{0}));
  EXPECT_EQ(cpu.end_bytes, cpu.start_bytes);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(AtPeakBytes(cpu, "hold" + std::to_string(t)), largest[t]) << t;
  }
  EXPECT_EQ(AtPeakBytes(cpu, "churn"), 0);
  EXPECT_FALSE(HasNote(report, "peak_bytes")) << report.Table();
}

// 16 threads each hold 16 blocks of their own sizes at once, then free all but one.
TEST_F(MemoryTest, SixteenThreadsAllocatingGiveTheExactPlacePeakAndEndBytes) {
  constexpr int kThreads = 16, kBlocks = 16;
  EnableProfiler(ProfilerState::kCPU);
  SpinBarrier all_hold(kThreads);
  std::vector<void*> kept(kThreads);
  int64_t peak = 0, end = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int b = 0; b < kBlocks; ++b) peak += 1000 * (t + 1) + 100 * b;
    end += 1000 * (t + 1);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RecordEvent e("worker");
      std::vector<void*> blocks;
      for (int b = 0; b < kBlocks; ++b) {
        blocks.push_back(cpu_.Allocate(static_cast<size_t>(1000 * (t + 1) + 100 * b)));
      }
      all_hold.ArriveAndWait();
      kept[t] = blocks[0];
      for (int b = 1; b < kBlocks; ++b) cpu_.Free(blocks[b]);
    });
  }
  for (std::thread& t : threads) t.join();
  const Report report = StopProfiler();
  const PlaceSummary& cpu = PlaceOf(report, "CPU");
  EXPECT_EQ(cpu.peak_bytes - cpu.start_bytes, peak);
  EXPECT_EQ(cpu.end_bytes - cpu.start_bytes, end);
  EXPECT_EQ(AtPeakBytes(cpu, "worker"), peak);
  for (void* p : kept) cpu_.Free(p);
}

// A block outlives the thread that allocated it: its share stays in the place's sum, and
// the free on another thread takes it out again.
TEST_F(MemoryTest, AnExitedThreadsBlocksStayInThePlaceUntilFreedElsewhere) {
  const int place = internal::PlaceIndex(CPUPlace());
  const int64_t before = internal::PlaceLiveBytes(place);
  void* block = nullptr;
  std::thread([&] { block = cpu_.Allocate(12345); }).join();
  std::thread([] { std::vector<int> other_thread_work(10); }).join();  // may adopt its tables
  EXPECT_EQ(internal::PlaceLiveBytes(place) - before, 12345);
  cpu_.Free(block);
  EXPECT_EQ(internal::PlaceLiveBytes(place), before);
}

// Each step's peak comes from the replay: a short-lived block inside the step, on
// another thread, that neither step mark saw.
TEST_F(MemoryTest, AStepsPeakIncludesAnotherThreadsBlockNoStepMarkSaw) {
  EnableProfiler(ProfilerState::kCPU);
  void* kept = cpu_.Allocate(1000);
  std::thread([&] { cpu_.Free(cpu_.Allocate(5000)); }).join();
  MarkStep();
  std::thread([&] { cpu_.Free(cpu_.Allocate(700)); }).join();
  MarkStep();
  const Report report = StopProfiler();
  const int64_t start = PlaceOf(report, "CPU").start_bytes;
  ASSERT_EQ(report.steps.size(), 2u);
  EXPECT_EQ(report.steps[0].peak_bytes.at("CPU") - start, 6000);
  EXPECT_EQ(report.steps[1].peak_bytes.at("CPU") - start, 1700);
  EXPECT_EQ(report.steps[1].end_bytes.at("CPU") - start, 1000);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - start, 6000);
  cpu_.Free(kept);
}

// Two threads alive at once (an exited thread's tables may go to the next one, whose
// moves then add to the same share), each allocating and freeing 1 MiB in turn.
class TwoThreadsTest : public MemoryTest {
 protected:
  void OneMiBOnEachOfTwoLiveThreadsInTurn() {
    std::atomic<int> turn{0};
    auto in_turn = [&](int mine) {
      while (turn.load() != mine) std::this_thread::yield();
      cpu_.Free(cpu_.Allocate(kMiB));
      turn.store(mine + 1);
      while (turn.load() != 2) std::this_thread::yield();
    };
    std::thread a(in_turn, 0), b(in_turn, 1);
    a.join();
    b.join();
  }
};

// Without the timeline the threads' own marks are added up: exact when one thread moved
// the place's bytes in a step, an upper bound, and said so, when two peaked apart.
TEST_F(TwoThreadsTest, WithoutTheTimelineThreadsPeakingApartGiveAnUpperBoundTheReportNames) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_memory_timeline = false;
  EnableProfiler(ProfilerState::kCPU);
  std::thread([&] { cpu_.Free(cpu_.Allocate(2 * kMiB)); }).join();
  MarkStep();  // one thread moved the bytes: exact
  OneMiBOnEachOfTwoLiveThreadsInTurn();
  MarkStep();  // two threads, 1 MiB each, never at once: at most 2 MiB
  const Report report = StopProfiler();
  const int64_t start = PlaceOf(report, "CPU").start_bytes;
  ASSERT_EQ(report.steps.size(), 2u);
  EXPECT_EQ(report.steps[0].peak_bytes.at("CPU") - start, 2 * kMiB);
  EXPECT_EQ(report.steps[1].peak_bytes.at("CPU") - start, 2 * kMiB);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - start, 2 * kMiB);
  EXPECT_TRUE(HasNote(report, "CPU: peak_bytes is an upper bound")) << report.Table();
  EXPECT_TRUE(HasNote(report, "2 threads allocated or freed on it between two step marks"));
}

TEST_F(TwoThreadsTest, WithTheTimelineThreadsPeakingApartGiveTheExactPeak) {
  EnableProfiler(ProfilerState::kCPU);
  OneMiBOnEachOfTwoLiveThreadsInTurn();
  MarkStep();
  const Report report = StopProfiler();
  const int64_t start = PlaceOf(report, "CPU").start_bytes;
  EXPECT_EQ(report.steps[0].peak_bytes.at("CPU") - start, kMiB);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - start, kMiB);
  EXPECT_FALSE(HasNote(report, "peak_bytes")) << report.Table();
}

}  // namespace
}  // namespace paddle_prof
