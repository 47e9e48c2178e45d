// Memory per operator and place against known allocations: exact bytes for peaks, live
// blocks, frees of old, unknown and already freed blocks, threads, sizes that cannot be
// served, and addresses reported live again.
#include "memory_tracker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "live_block_table.h"
#include "paddle_prof/paddle_prof.h"
#include "place_registry.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Address;
using testing::Cpu;
using testing::HasWarning;
using testing::kMiB;
using testing::MemoryTest;
using testing::PlaceOf;
using testing::ReadJson;
using testing::Row;
using testing::TempPath;

TEST_F(MemoryTest, FillConstantReadsItsExactSize) {
  EnableProfiler(ProfilerState::kCPU);
  void* out;
  {
    RecordEvent e("fill_constant");
    out = cpu_.Allocate(1000 * 784 * sizeof(float));
  }
  const Report report = StopProfiler();
  const MemoryStats& m = Cpu(Row(report, "fill_constant"));
  EXPECT_EQ(m.peak_bytes, 3136000);
  EXPECT_EQ(m.alloc_bytes, 3136000);
  EXPECT_EQ(m.alloc_count, 1);
  EXPECT_EQ(m.live_bytes, 3136000);
  EXPECT_EQ(m.free_count, 0);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes - PlaceOf(report, "CPU").start_bytes, 3136000);
  cpu_.Free(out);
}

// A block its allocator made before it was tracked (a torch tensor made before the
// import of paddle_prof.torch): live before the window, and no longer where it was
// counted before (the native place, under run --native).
TEST_F(MemoryTest, AnAdoptedBlockIsLiveBeforeTheWindowAndLeavesItsFormerPlace) {
  alignas(64) static char earlier[4096];
  alignas(64) static char untracked[512];
  const int native = internal::PlaceIndex(NativePlace());
  const int64_t native_before = internal::LiveBlocks::SumShares(native, 0).live;
  RecordAlloc(NativePlace(), earlier, sizeof(earlier));
  const int cpu = internal::PlaceIndex(CPUPlace());
  ASSERT_TRUE(internal::AdoptBlock(cpu, earlier, 3000));
  ASSERT_TRUE(internal::AdoptBlock(cpu, untracked, 500));
  EXPECT_EQ(internal::LiveBlocks::SumShares(native, 0).live, native_before);
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("release");
    RecordFree(CPUPlace(), earlier);
  }
  const Report report = StopProfiler();
  EXPECT_EQ(PlaceOf(report, "CPU").start_bytes, 3500);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes, 500);
  EXPECT_EQ(PlaceOf(report, "CPU").untracked_frees, 0);
  EXPECT_EQ(Cpu(Row(report, "release")).free_bytes, 3000);
  RecordFree(CPUPlace(), untracked);
}

TEST_F(MemoryTest, Conv2dPeakIncludesItsIm2colBufferAndNetIsTheOutput) {
  EnableProfiler(ProfilerState::kCPU);
  void* output = Conv2d();
  const Report report = StopProfiler();
  const MemoryStats& m = Cpu(Row(report, "conv2d"));
  EXPECT_EQ(m.peak_bytes, 1310720);
  EXPECT_EQ(m.alloc_bytes - m.free_bytes, 262144);
  EXPECT_EQ(m.live_bytes, 262144);
  EXPECT_EQ(m.alloc_count, 2);
  EXPECT_EQ(m.free_count, 1);
  EXPECT_NE(report.Table().find("1.25 MiB"), std::string::npos) << report.Table();
  cpu_.Free(output);
}

TEST_F(MemoryTest, AParentPeakIncludesItsChildAndAChildNeverExceedsIt) {
  EnableProfiler(ProfilerState::kCPU);
  std::vector<void*> keep;
  {
    RecordEvent parent("parent");
    keep.push_back(cpu_.Allocate(100));
    {
      RecordEvent child("child");
      void* tmp = cpu_.Allocate(1000);
      cpu_.Free(tmp);
      keep.push_back(cpu_.Allocate(10));
    }
    keep.push_back(cpu_.Allocate(50));
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "child")).peak_bytes, 1000);
  EXPECT_EQ(Cpu(Row(report, "parent")).peak_bytes, 1100);
  EXPECT_EQ(Cpu(Row(report, "parent")).alloc_bytes, 1160);
  EXPECT_EQ(Cpu(Row(report, "parent")).live_bytes, 150);  // the child's 10 are the child's
  EXPECT_EQ(Cpu(Row(report, "child")).live_bytes, 10);
  for (void* p : keep) cpu_.Free(p);
}

TEST_F(MemoryTest, FreeingAnOuterBlockInsideAChildKeepsTheOuterPeak) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent parent("parent");
    void* a = cpu_.Allocate(100);
    RecordEvent child("child");
    void* b = cpu_.Allocate(50);  // the parent holds 150 here
    cpu_.Free(a);
    cpu_.Free(b);
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "parent")).peak_bytes, 150);
  EXPECT_EQ(Cpu(Row(report, "child")).peak_bytes, 50);
  EXPECT_EQ(Cpu(Row(report, "child")).free_bytes, 150);  // frees of any age count
}

TEST_F(MemoryTest, FreeingAnOldBlockDoesNotHideWhatTheOpAllocated) {
  const Place gpu = CUDAPlace(0);
  RecordAlloc(gpu, Address(1), 100 * kMiB);  // before profiling
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("step_op");
    RecordFree(gpu, Address(1));
    RecordAlloc(gpu, Address(2), 10 * kMiB);
  }
  const Report report = StopProfiler();
  const MemoryStats& m = Row(report, "step_op").memory.at("CUDA:0");
  EXPECT_EQ(m.peak_bytes, 10 * kMiB);
  EXPECT_EQ(m.free_bytes, 100 * kMiB);
  EXPECT_EQ(m.free_count, 1);
  EXPECT_EQ(m.live_bytes, 10 * kMiB);
  const PlaceSummary& place = PlaceOf(report, "CUDA:0");
  EXPECT_EQ(place.start_bytes, 100 * kMiB);
  EXPECT_EQ(place.peak_bytes, 100 * kMiB);
  EXPECT_EQ(place.end_bytes, 10 * kMiB);
  ASSERT_FALSE(place.at_peak.empty());
  EXPECT_EQ(place.at_peak[0].name, "[before profiling]");
  EXPECT_EQ(place.at_peak[0].bytes, 100 * kMiB);
  RecordFree(gpu, Address(2));
}

TEST_F(MemoryTest, AllocationsWithNoEventOpenGoToTheNoEventRow) {
  EnableProfiler(ProfilerState::kCPU);
  void* a = cpu_.Allocate(4096);
  void* b = cpu_.Allocate(1024);
  cpu_.Free(a);
  const Report report = StopProfiler();
  const EventRow& row = Row(report, "[no event]");
  EXPECT_EQ(row.calls, 0);
  EXPECT_EQ(Cpu(row).alloc_bytes, 5120);
  EXPECT_EQ(Cpu(row).alloc_count, 2);
  EXPECT_EQ(Cpu(row).peak_bytes, 5120);
  EXPECT_EQ(Cpu(row).free_bytes, 4096);
  EXPECT_EQ(Cpu(row).live_bytes, 1024);
  EXPECT_NE(report.Table().find("[no event]  0      -"), std::string::npos) << report.Table();
  cpu_.Free(b);
}

TEST_F(MemoryTest, AFreeOfAnUnknownPointerIsCountedNotFatal) {
  int not_tracked = 0;
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("bad_free");
    RecordFree(CPUPlace(), &not_tracked);
    RecordFree(CPUPlace(), &not_tracked);
  }
  cpu_.Free(nullptr);  // ignored, as free(nullptr)
  const Report report = StopProfiler();
  EXPECT_EQ(PlaceOf(report, "CPU").untracked_frees, 2);
  EXPECT_EQ(Cpu(Row(report, "bad_free")).free_count, 0);
  EXPECT_NE(report.Table().find("2 untracked frees"), std::string::npos);
}

TEST_F(MemoryTest, TrackingStaysOnWhileProfilingIsOff) {
  void* early = cpu_.Allocate(2048);
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("free_op");
    cpu_.Free(early);
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "free_op")).free_bytes, 2048);
  EXPECT_EQ(Cpu(Row(report, "free_op")).peak_bytes, 0);
  EXPECT_EQ(PlaceOf(report, "CPU").start_bytes - PlaceOf(report, "CPU").end_bytes, 2048);
}

TEST_F(MemoryTest, PlacePeakIsExactAcrossThreads) {
  EnableProfiler(ProfilerState::kCPU);
  std::atomic<int> allocated{0};
  auto worker = [&] {
    RecordEvent e("worker");
    void* p = cpu_.Allocate(kMiB);
    ++allocated;
    while (allocated.load() < 2) std::this_thread::yield();  // both blocks live at once
    cpu_.Free(p);
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  const Report report = StopProfiler();
  const PlaceSummary& place = PlaceOf(report, "CPU");
  EXPECT_EQ(place.peak_bytes - place.start_bytes, 2 * kMiB);
  EXPECT_EQ(Cpu(Row(report, "worker")).peak_bytes, kMiB);  // peak is per call, per thread
  EXPECT_EQ(Cpu(Row(report, "worker")).alloc_bytes, 2 * kMiB);
}

TEST_F(MemoryTest, MemorySortKeysOrderRows) {
  EnableProfiler(ProfilerState::kCPU);
  std::vector<void*> keep;
  for (const auto& [name, peak, live] : std::vector<std::tuple<const char*, int, int>>{
           {"a", 100, 90}, {"b", 300, 10}, {"c", 200, 50}}) {
    RecordEvent e(name);
    void* tmp = cpu_.Allocate(peak - live);
    keep.push_back(cpu_.Allocate(live));
    cpu_.Free(tmp);
  }
  const Report by_peak = StopProfiler(EventSortingKey::kPeakMemory);
  ASSERT_EQ(by_peak.events.size(), 3u);
  EXPECT_EQ(by_peak.events[0].name + by_peak.events[1].name + by_peak.events[2].name, "bca");
  EXPECT_EQ(SortingKeyName(by_peak.sorted_by), "peak_memory");
  for (void* p : keep) cpu_.Free(p);
}

TEST_F(MemoryTest, JsonAndTraceCarryTheMemory) {
  const std::string path = TempPath("memory");
  EnableProfiler(ProfilerState::kCPU);
  void* out;
  {
    RecordEvent e("fill_constant");
    out = cpu_.Allocate(3136000);
  }
  MarkStep();
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  const nlohmann::json j = ReadJson(path + ".summary.json");
  const nlohmann::json& m = j.at("events")[0].at("memory").at("CPU");
  for (const char* field :
       {"peak_bytes", "alloc_bytes", "alloc_count", "free_bytes", "free_count", "live_bytes"}) {
    EXPECT_TRUE(m.contains(field)) << field;
  }
  EXPECT_EQ(m.at("peak_bytes"), 3136000);
  const nlohmann::json& place = j.at("places")[0];
  EXPECT_EQ(place.at("place"), "CPU");
  EXPECT_EQ(place.at("at_peak")[0].at("name"), "fill_constant");
  EXPECT_EQ(place.at("at_peak")[0].at("bytes"), 3136000);
  EXPECT_EQ(j.at("steps")[0].at("end_bytes").at("CPU").get<int64_t>() -
                place.at("start_bytes").get<int64_t>(),
            3136000);

  const nlohmann::json trace = ReadJson(path);
  int64_t last_counter = -1;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "C" && e.at("name") == "Memory CPU") last_counter = e.at("args").at("bytes");
  }
  EXPECT_EQ(last_counter, place.at("end_bytes").get<int64_t>());
  cpu_.Free(out);
  testing::RemoveProfileFiles(path);
}

TEST_F(MemoryTest, FourThreadsAllocatingAndFreeingConcurrently) {
  EnableProfiler(ProfilerState::kCPU);
  std::mutex mu;
  std::vector<void*> handed_over;  // blocks one thread allocates and another frees
  constexpr int kThreads = 4, kIterations = 2000;
  auto worker = [&](int id) {
    for (int i = 0; i < kIterations; ++i) {
      RecordEvent e("op");
      void* own = cpu_.Allocate(64 + id);
      void* shared = cpu_.Allocate(128);
      cpu_.Free(own);
      std::lock_guard<std::mutex> lock(mu);
      handed_over.push_back(shared);
      if (handed_over.size() > 8) {
        cpu_.Free(handed_over.front());
        handed_over.erase(handed_over.begin());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) threads.emplace_back(worker, id);
  for (std::thread& t : threads) t.join();
  for (void* p : handed_over) cpu_.Free(p);
  const Report report = StopProfiler();
  const MemoryStats& m = Cpu(Row(report, "op"));
  EXPECT_EQ(Row(report, "op").calls, kThreads * kIterations);
  EXPECT_EQ(m.alloc_count, 2 * kThreads * kIterations);
  EXPECT_EQ(m.alloc_bytes, kThreads * kIterations * (64 + 128) + kIterations * (0 + 1 + 2 + 3));
  EXPECT_LE(m.peak_bytes, 64 + 3 + 128);
  EXPECT_GE(m.peak_bytes, 64 + 128);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes, PlaceOf(report, "CPU").start_bytes);
}

// A base allocator that counts what reaches it and may hand out a block for any size.
class CountingAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    ++allocs;
    return std::malloc(bytes > 64 ? 64 : bytes);  // never used past 64 bytes here
  }
  void Free(void* ptr) override {
    ++frees;
    std::free(ptr);
  }
  int allocs = 0;
  int frees = 0;
};

TEST_F(MemoryTest, SizesThatCannotBeServedFailAndCountNothing) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("huge");
    for (const size_t bytes : {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 62, SIZE_MAX - 63}) {
      EXPECT_EQ(CPUAllocator()->Allocate(bytes), nullptr) << bytes;
      EXPECT_EQ(cpu_.Allocate(bytes), nullptr) << bytes;
    }
    RecordAlloc(CPUPlace(), Address(1), size_t{INT64_MAX} + 1);
    RecordAlloc(CPUPlace(), Address(2), SIZE_MAX);
    // Each below INT64_MAX, their sum above it.
    RecordAlloc(CPUPlace(), Address(3), size_t{INT64_MAX} / 2 + 1);
    RecordAlloc(CPUPlace(), Address(4), size_t{INT64_MAX} / 2 + 1);
    RecordAlloc(CPUPlace(), Address(5), (size_t{1} << 56) + 1);
  }
  {
    RecordEvent e("largest");
    RecordAlloc(CPUPlace(), Address(6), size_t{1} << 56);  // served by no machine, yet valid
    RecordFree(CPUPlace(), Address(6));
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "huge")).alloc_count, 0);
  EXPECT_EQ(Cpu(Row(report, "huge")).alloc_bytes, 0);
  EXPECT_EQ(Cpu(Row(report, "largest")).peak_bytes, int64_t{1} << 56);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes, PlaceOf(report, "CPU").start_bytes);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - PlaceOf(report, "CPU").start_bytes,
            int64_t{1} << 56);
  EXPECT_TRUE(HasWarning(report, "5 allocation(s) of more than 64 PiB (2^56 bytes) ignored"))
      << report.Table();
}

TEST_F(MemoryTest, ABlockTheTrackerCannotTrackGoesBackToItsBase) {
  auto base = std::make_shared<CountingAllocator>();
  TrackingAllocator tracked(base, CPUPlace());
  EXPECT_THROW(tracked.Allocate(size_t{INT64_MAX} + 1), std::bad_alloc);
  EXPECT_THROW(tracked.Allocate(size_t{INT64_MAX}), std::bad_alloc);  // two would overflow
  EXPECT_EQ(base->allocs, 2);
  EXPECT_EQ(base->frees, 2);
}

TEST_F(MemoryTest, ADoubleFreeIsCountedAndNeverReachesTheBase) {
  auto base = std::make_shared<CountingAllocator>();
  TrackingAllocator tracked(base, CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  void* p = tracked.Allocate(48);
  tracked.Free(p);
  tracked.Free(p);  // the tracker knows it is no longer live
  int on_stack = 0;
  tracked.Free(&on_stack);  // never handed out
  const Report report = StopProfiler();
  EXPECT_EQ(base->frees, 1);
  EXPECT_EQ(PlaceOf(report, "CPU").untracked_frees, 2);
}

// A block a framework's own allocator reported, or another base made, is not the
// allocator's to free: it is counted, stays live where it came from and never reaches
// the base. Allocators over one base free each other's blocks.
TEST_F(MemoryTest, ABlockAnotherAllocatorMadeNeverReachesTheBaseAndStaysLive) {
  auto base = std::make_shared<CountingAllocator>();
  auto other_base = std::make_shared<CountingAllocator>();
  TrackingAllocator tracked(base, CPUPlace()), same_base(base, CPUPlace());
  TrackingAllocator other(other_base, CPUPlace());
  EnableProfiler(ProfilerState::kCPU);
  static char framework_block[128];
  {
    RecordEvent e("framework");
    RecordAlloc(CPUPlace(), framework_block, 128);
  }
  tracked.Free(framework_block);
  void* theirs = other.Allocate(40);
  tracked.Free(theirs);
  void* ours = tracked.Allocate(24);
  same_base.Free(ours);
  const Report live = SnapshotProfiler();
  EXPECT_EQ(PlaceOf(live, "CPU").untracked_frees, 2);
  EXPECT_EQ(PlaceOf(live, "CPU").end_bytes - PlaceOf(live, "CPU").start_bytes, 128 + 40);
  EXPECT_EQ(base->frees, 1);
  EXPECT_EQ(other_base->frees, 0);
  other.Free(theirs);
  RecordFree(CPUPlace(), framework_block);
  const Report report = StopProfiler();
  EXPECT_EQ(other_base->frees, 1);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes, PlaceOf(report, "CPU").start_bytes);
  EXPECT_EQ(Cpu(Row(report, "framework")).live_bytes, 0);
}

TEST_F(MemoryTest, RecordAllocOfALivePointerFreesTheOldBlockFirst) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("first");
    RecordAlloc(CPUPlace(), Address(7), 1000);
  }
  {
    RecordEvent e("again");
    RecordAlloc(CPUPlace(), Address(7), 300);  // the framework reused the address
  }
  const Report report = StopProfiler();
  const PlaceSummary& place = PlaceOf(report, "CPU");
  EXPECT_EQ(place.end_bytes - place.start_bytes, 300);
  int64_t live_over_rows = 0;
  for (const EventRow& row : report.events) live_over_rows += Cpu(row).live_bytes;
  EXPECT_EQ(live_over_rows, 300);
  EXPECT_EQ(Cpu(Row(report, "again")).free_bytes, 1000);
  EXPECT_EQ(Cpu(Row(report, "first")).live_bytes, 0);
  EXPECT_TRUE(HasWarning(report, "1 RecordAlloc() call(s) named a pointer that was still live"))
      << report.Table();
  RecordFree(CPUPlace(), Address(7));
  EXPECT_EQ(internal::PlaceLiveBytes(internal::PlaceIndex(CPUPlace())), place.start_bytes);
}

}  // namespace
}  // namespace paddle_prof
