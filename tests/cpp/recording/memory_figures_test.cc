// The memory figures of a level and their arithmetic, in both layouts.
#include "memory_figures.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace paddle_prof::internal {
namespace {

TEST(MemoryFiguresTest, AllocationsRaiseThePeakAndFreesOnlyCount) {
  MemoryFigures<int64_t> f;
  f.Alloc(100);
  f.Alloc(50);
  f.running -= 100;  // a block of its own freed (the tracker takes it out of running)
  f.CountFree(100);
  f.Alloc(20);
  EXPECT_EQ(f.running, 70);
  EXPECT_EQ(f.peak, 150);
  const MemoryStats s = f.Stats();
  EXPECT_EQ(s.peak_bytes, 150);
  EXPECT_EQ(s.alloc_bytes, 170);
  EXPECT_EQ(s.alloc_count, 3);
  EXPECT_EQ(s.free_bytes, 100);
  EXPECT_EQ(s.free_count, 1);
  EXPECT_EQ(s.live_bytes, 0);  // counted from live blocks, never here
}

TEST(MemoryFiguresTest, AChildsPeakComesOnTopOfWhatItsParentHeld) {
  MemoryFigures<int64_t> parent;
  parent.Alloc(1000);
  MemoryFigures<int64_t> child;
  child.Alloc(300);
  child.running -= 300;
  child.CountFree(300);
  child.Alloc(100);
  parent.Absorb(child);
  EXPECT_EQ(parent.peak, 1300);     // 1000 held, then the child's 300
  EXPECT_EQ(parent.running, 1100);  // the child's 100 is still held
  EXPECT_EQ(parent.alloc_bytes, 1400);
  EXPECT_EQ(parent.alloc_count, 3);
  EXPECT_EQ(parent.free_bytes, 300);
  EXPECT_EQ(parent.free_count, 1);
  MemoryFigures<int64_t> small;
  small.Alloc(10);
  parent.Absorb(small);
  EXPECT_EQ(parent.peak, 1300);  // 1110 is no new high
}

TEST(MemoryFiguresTest, OwnedCountersDoTheSameArithmetic) {
  RootUsage root;
  root.Alloc(64);
  root.Alloc(64);
  root.running -= 64;
  root.CountFree(64);
  MemoryFigures<int64_t> plain;
  plain.Alloc(64);
  plain.Alloc(64);
  plain.running -= 64;
  plain.CountFree(64);
  const MemoryStats a = root.Stats();
  const MemoryStats b = plain.Stats();
  EXPECT_EQ(a.peak_bytes, 128);
  EXPECT_EQ(a.peak_bytes, b.peak_bytes);
  EXPECT_EQ(a.alloc_bytes, b.alloc_bytes);
  EXPECT_EQ(a.alloc_count, b.alloc_count);
  EXPECT_EQ(a.free_bytes, b.free_bytes);
  EXPECT_EQ(a.free_count, b.free_count);
  EXPECT_EQ(static_cast<int64_t>(root.running), 64);
  root.Clear();
  EXPECT_EQ(root.Stats().alloc_count, 0);
  EXPECT_EQ(static_cast<int64_t>(root.running), 0);
  EXPECT_EQ(static_cast<int64_t>(root.peak), 0);
}

TEST(MemoryFiguresTest, RowsTakeTheLargestPeakAndAddTheRest) {
  MemoryStats row;
  MemoryStats call;
  call.peak_bytes = 30;
  call.alloc_bytes = 30;
  call.alloc_count = 1;
  call.free_bytes = 10;
  call.free_count = 1;
  call.live_bytes = 20;
  AddUp(&row, call);
  call.peak_bytes = 10;
  AddUp(&row, call);
  EXPECT_EQ(row.peak_bytes, 30);
  EXPECT_EQ(row.alloc_bytes, 60);
  EXPECT_EQ(row.alloc_count, 2);
  EXPECT_EQ(row.free_bytes, 20);
  EXPECT_EQ(row.free_count, 2);
  EXPECT_EQ(row.live_bytes, 40);
}

}  // namespace
}  // namespace paddle_prof::internal
