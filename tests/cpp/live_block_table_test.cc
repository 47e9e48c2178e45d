// The live-block tables: a block freed on another thread than the one that allocated
// it, and tables that grow past the first one and keep every block findable.
#include "live_block_table.h"

#include <gtest/gtest.h>

#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Address;
using testing::Cpu;
using testing::MemoryTest;
using testing::PlaceOf;
using testing::Row;

TEST_F(MemoryTest, ABlockFreedOnAnotherThreadIsSizedAndCharged) {
  EnableProfiler(ProfilerState::kCPU);
  void* block = nullptr;
  std::thread([&] {
    RecordEvent e("producer");
    block = cpu_.Allocate(777);
  }).join();
  {
    RecordEvent e("consumer");
    cpu_.Free(block);
  }
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "producer")).alloc_bytes, 777);
  EXPECT_EQ(Cpu(Row(report, "producer")).live_bytes, 0);
  EXPECT_EQ(Cpu(Row(report, "consumer")).free_bytes, 777);
  EXPECT_EQ(Cpu(Row(report, "consumer")).peak_bytes, 0);
  EXPECT_EQ(PlaceOf(report, "CPU").end_bytes, PlaceOf(report, "CPU").start_bytes);
}

TEST_F(MemoryTest, ManyLiveBlocksGrowTheTableAndStayFindable) {
  constexpr int kBlocks = 100000;  // several times the first table's slots
  const Place gpu = CUDAPlace(1);
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("many");
    for (int i = 0; i < kBlocks; ++i) RecordAlloc(gpu, Address(i), 8);
  }
  std::thread([&] {  // frees from another thread search every thread's tables
    RecordEvent e("free_many");
    for (int i = 0; i < kBlocks; i += 2) RecordFree(gpu, Address(i));
  })
      .join();
  for (int i = 1; i < kBlocks; i += 2) RecordFree(gpu, Address(i));
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "many").memory.at("CUDA:1").alloc_bytes, 8 * kBlocks);
  EXPECT_EQ(Row(report, "many").memory.at("CUDA:1").peak_bytes, 8 * kBlocks);
  EXPECT_EQ(Row(report, "free_many").memory.at("CUDA:1").free_count, kBlocks / 2);
  EXPECT_EQ(PlaceOf(report, "CUDA:1").peak_bytes, 8 * kBlocks);
  EXPECT_EQ(PlaceOf(report, "CUDA:1").end_bytes, 0);
  EXPECT_EQ(PlaceOf(report, "CUDA:1").untracked_frees, 0);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
}

}  // namespace
}  // namespace paddle_prof
