// The live-block tables: a block freed on another thread than the one that allocated
// it, and tables that grow past the first one and keep every block findable; a table's
// inserts, removals and walks on hand-made blocks.
#include "live_block_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <utility>

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

namespace internal {
namespace {

using testing::Address;
using testing::LiveBlockOf;

TEST(BlockTableTest, ARemovedBlockComesBackWithEveryFieldAndOnlyOnce) {
  static const char kName[] = "conv2d", kTag[] = "[1, 3]";
  BlockTable table(1024);
  LiveBlock in;
  in.size = int64_t{1} << 40;
  in.place = 15;
  in.thread = 4321;
  in.serial = 99;
  in.window = 5;
  in.step = 1 << 30;
  in.name = kName;
  in.tag = kTag;
  ASSERT_TRUE(table.Insert(Address(1), in));
  LiveBlock out;
  EXPECT_FALSE(table.Remove(Address(2), &out, /*owner=*/true));  // never inserted
  ASSERT_TRUE(table.Remove(Address(1), &out, /*owner=*/true));
  EXPECT_EQ(out.size, int64_t{1} << 40);
  EXPECT_EQ(out.place, 15);
  EXPECT_EQ(out.thread, 4321);
  EXPECT_EQ(out.serial, 99u);
  EXPECT_EQ(out.window, 5u);
  EXPECT_EQ(out.step, 1 << 30);
  EXPECT_EQ(out.name, kName);
  EXPECT_EQ(out.tag, kTag);
  EXPECT_FALSE(table.Remove(Address(1), &out, /*owner=*/true));  // already freed
  // Allocated while profiling was off: no thread, no owner.
  ASSERT_TRUE(table.Insert(Address(3), LiveBlockOf(8)));
  ASSERT_TRUE(table.Remove(Address(3), &out, /*owner=*/true));
  EXPECT_EQ(out.size, 8);
  EXPECT_EQ(out.thread, -1);
  EXPECT_EQ(out.window, 0u);
  EXPECT_EQ(out.name, nullptr);
  EXPECT_EQ(out.tag, nullptr);
}

TEST(BlockTableTest, ATableTakesOneBlockPerSlotAndReusesTheSlotsOfFreedOnes) {
  constexpr int kSlots = BlockTable::kMaxProbe;  // every probe sees every slot
  BlockTable table(kSlots);
  for (int i = 0; i < kSlots; ++i) ASSERT_TRUE(table.Insert(Address(i), LiveBlockOf(i))) << i;
  EXPECT_FALSE(table.Insert(Address(kSlots), LiveBlockOf(kSlots)));
  LiveBlock out;
  for (int i = 0; i < kSlots; i += 2) {
    ASSERT_TRUE(table.Remove(Address(i), &out, /*owner=*/true)) << i;
  }
  for (int i = 0; i < kSlots / 2; ++i) {
    ASSERT_TRUE(table.Insert(Address(1000 + i), LiveBlockOf(1000 + i))) << i;
  }
  EXPECT_FALSE(table.Insert(Address(kSlots), LiveBlockOf(kSlots)));
  // The blocks kept are found past the freed and reused slots, with their own sizes.
  for (int i = 1; i < kSlots; i += 2) {
    ASSERT_TRUE(table.Remove(Address(i), &out, /*owner=*/true)) << i;
    EXPECT_EQ(out.size, i);
  }
  for (int i = 0; i < kSlots / 2; ++i) {
    ASSERT_TRUE(table.Remove(Address(1000 + i), &out, /*owner=*/true)) << i;
    EXPECT_EQ(out.size, 1000 + i);
  }
}

// Another thread's free leaves the slot taken: the owner's inserts read it and reuse it,
// so a table whose blocks another thread frees never fills.
TEST(BlockTableTest, SlotsAnotherThreadFreedAreReused) {
  constexpr int kSlots = BlockTable::kMaxProbe;  // every probe sees every slot
  BlockTable table(kSlots);
  LiveBlock out;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kSlots; ++i) {
      ASSERT_TRUE(table.Insert(Address(round * 100 + i), LiveBlockOf(i + 1))) << round << " " << i;
    }
    EXPECT_FALSE(table.Insert(Address(99), LiveBlockOf(1)));
    for (int i = 0; i < kSlots; ++i) {
      ASSERT_TRUE(table.Remove(Address(round * 100 + i), &out, /*owner=*/false)) << i;
      EXPECT_EQ(out.size, i + 1);
    }
  }
  int blocks = 0;
  table.ForEach([&blocks](const LiveBlock&) { ++blocks; });
  EXPECT_EQ(blocks, 0);
}

// A small table, three quarters full, so that blocks share probe runs: frees by the
// owner (which empty the end of a run) and by other threads (which leave tombstones),
// in random order, never lose a block nor find one that is gone, and a walk sees the
// live blocks, each once.
TEST(BlockTableTest, BlocksInSharedRunsStayFindableWhateverFreesThem) {
  constexpr int kSlots = 16, kLive = 12, kAddresses = 40;
  BlockTable table(kSlots);
  std::map<int, int64_t> live;  // address index -> size
  std::mt19937 random(7);
  LiveBlock out;
  for (int op = 0; op < 20000; ++op) {
    const int a = static_cast<int>(random() % kAddresses);
    const bool owner = random() % 2 == 0;
    const auto it = live.find(a);
    if (it == live.end() && static_cast<int>(live.size()) < kLive) {
      ASSERT_TRUE(table.Insert(Address(a), LiveBlockOf(op + 1))) << op;
      live[a] = op + 1;
    } else if (it == live.end()) {
      ASSERT_FALSE(table.Remove(Address(a), &out, owner)) << op;
    } else {
      ASSERT_TRUE(table.Remove(Address(a), &out, owner)) << op;
      ASSERT_EQ(out.size, it->second) << op;
      live.erase(it);
      ASSERT_FALSE(table.Remove(Address(a), &out, owner)) << op;
    }
    int64_t blocks = 0, bytes = 0, live_bytes = 0;
    table.ForEach([&](const LiveBlock& b) {
      ++blocks;
      bytes += b.size;
    });
    for (const auto& entry : live) live_bytes += entry.second;
    ASSERT_EQ(blocks, static_cast<int64_t>(live.size())) << op;
    ASSERT_EQ(bytes, live_bytes) << op;
  }
  for (const auto& [a, size] : live) {
    ASSERT_TRUE(table.Remove(Address(a), &out, /*owner=*/true)) << a;
    EXPECT_EQ(out.size, size);
  }
}

TEST(BlockTableTest, ForEachVisitsEachLiveBlockOnce) {
  BlockTable table(1024);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(table.Insert(Address(i), LiveBlockOf(i + 1))) << i;
  LiveBlock out;
  for (int i = 0; i < 100; i += 3) ASSERT_TRUE(table.Remove(Address(i), &out, /*owner=*/true)) << i;
  int64_t blocks = 0, bytes = 0;
  table.ForEach([&](const LiveBlock& b) {
    ++blocks;
    bytes += b.size;
  });
  EXPECT_EQ(blocks, 66);   // 100 less the 34 multiples of 3 below 100
  EXPECT_EQ(bytes, 3333);  // 5050 less 1 + 4 + ... + 100
}

TEST(LiveBlocksTest, RemoveFindsAnotherThreadsBlockAndRemoveOwnDoesNot) {
  ASSERT_TRUE(LiveBlocks::Insert(Address(1), LiveBlockOf(777)));
  bool found_as_own = true, found = false, own_found = false;
  int64_t size = 0;
  std::thread([&] {
    ASSERT_TRUE(LiveBlocks::Insert(Address(2), LiveBlockOf(5)));  // tables of its own
    LiveBlock out;
    found_as_own = LiveBlocks::RemoveOwn(Address(1), &out);
    found = LiveBlocks::Remove(Address(1), &out);
    size = out.size;
    own_found = LiveBlocks::RemoveOwn(Address(2), &out) && out.size == 5;
  }).join();
  EXPECT_FALSE(found_as_own);
  EXPECT_TRUE(found);
  EXPECT_EQ(size, 777);
  EXPECT_TRUE(own_found);
  LiveBlock out;
  EXPECT_FALSE(LiveBlocks::Remove(Address(1), &out));
  EXPECT_FALSE(LiveBlocks::Remove(Address(2), &out));
}

TEST(LiveBlocksTest, ForEachSeesEveryBlockAcrossTableGrowth) {
  static const char kMarker[] = "marker";  // tells this test's blocks from any other
  constexpr int kBlocks = 50000;           // past the first table, which has 16,384 slots
  auto live = [] {
    std::pair<int64_t, int64_t> blocks_bytes{0, 0};
    LiveBlocks::ForEach([&](const LiveBlock& b) {
      if (b.name != kMarker) return;
      ++blocks_bytes.first;
      blocks_bytes.second += b.size;
    });
    return blocks_bytes;
  };
  for (int i = 0; i < kBlocks; ++i) {
    ASSERT_TRUE(LiveBlocks::Insert(Address(i), LiveBlockOf(i % 7 + 1, kMarker))) << i;
  }
  EXPECT_EQ(live(), std::make_pair(int64_t{kBlocks}, int64_t{199997}));
  int removed = 0;
  std::thread([&] {
    LiveBlock out;
    for (int i = 0; i < kBlocks; i += 2) removed += LiveBlocks::Remove(Address(i), &out);
  }).join();
  EXPECT_EQ(removed, kBlocks / 2);
  EXPECT_EQ(live(), std::make_pair(int64_t{kBlocks / 2}, int64_t{100000}));  // the odd ones
  LiveBlock out;
  for (int i = 1; i < kBlocks; i += 2) ASSERT_TRUE(LiveBlocks::RemoveOwn(Address(i), &out)) << i;
  EXPECT_EQ(live(), std::make_pair(int64_t{0}, int64_t{0}));
}

}  // namespace
}  // namespace internal
}  // namespace paddle_prof
