// The preload library's account of the program's anonymous mappings (mapped_regions.h),
// on addresses that are never mapped: `reserved` is the sum of the regions it holds (and
// `resident` stays 0, mincore finding nothing there).
#include "mapped_regions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace paddle_prof::internal {
namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
// Far above any address a 47-bit user space hands out.
const uintptr_t kBase = uintptr_t{1} << 60;
constexpr uintptr_t kSpan = uintptr_t{1} << 40;

int64_t Reserved() {
  int64_t reserved = 0, resident = 0;
  ReadMappings(&reserved, &resident);
  EXPECT_EQ(resident, 0);
  return reserved;
}

class MappedRegionsTest : public ::testing::Test {
 protected:
  void SetUp() override { NoteMapping(kBase, kSpan, false); }
  void TearDown() override { NoteMapping(kBase, kSpan, false); }
  static uintptr_t Page(uintptr_t n) { return kBase + n * kPage; }
};

TEST_F(MappedRegionsTest, MappingsAddUpAndUnmappingsCutThem) {
  NoteMapping(Page(0), 10 * kPage, true);
  NoteMapping(Page(20), 1, true);  // one byte takes a page
  EXPECT_EQ(Reserved(), static_cast<int64_t>(11 * kPage));
  NoteMapping(Page(4), 2 * kPage, false);  // a hole in the middle
  EXPECT_EQ(Reserved(), static_cast<int64_t>(9 * kPage));
  NoteMapping(Page(8), 13 * kPage, false);  // the tail of one, all of the next
  EXPECT_EQ(Reserved(), static_cast<int64_t>(6 * kPage));
  NoteMapping(Page(2), 4 * kPage, true);  // MAP_FIXED over a region and its hole
  EXPECT_EQ(Reserved(), static_cast<int64_t>(8 * kPage));
  NoteMapping(Page(0), 8 * kPage, false);
  EXPECT_EQ(Reserved(), 0);
}

TEST_F(MappedRegionsTest, TouchingMappingsAreOneRegionThatUnmappingSplitsAgain) {
  const int64_t before = MappingsNotFollowed();
  for (uintptr_t i = 0; i < 100000; ++i) NoteMapping(Page(i), kPage, true);  // one region
  EXPECT_EQ(Reserved(), static_cast<int64_t>(100000 * kPage));
  for (uintptr_t i = 1; i < 100000; i += 2) NoteMapping(Page(i), kPage, false);  // 50,000
  EXPECT_EQ(Reserved(), static_cast<int64_t>(50000 * kPage));
  EXPECT_EQ(MappingsNotFollowed(), before);
}

TEST_F(MappedRegionsTest, AFullTableCountsWhatItCannotHoldAndNeverOvercounts) {
  const int64_t before = MappingsNotFollowed();
  constexpr uintptr_t kRegions = 1 << 16;  // the table's size: [4i, 4i + 3) for each i
  for (uintptr_t i = 0; i < kRegions; ++i) NoteMapping(Page(4 * i), 3 * kPage, true);
  const auto pages = [](uintptr_t n) { return static_cast<int64_t>(n * kPage); };
  EXPECT_EQ(Reserved(), pages(3 * kRegions));
  EXPECT_EQ(MappingsNotFollowed(), before);
  NoteMapping(Page(4 * kRegions + 10), kPage, true);  // no room: left out, counted
  EXPECT_EQ(Reserved(), pages(3 * kRegions));
  EXPECT_EQ(MappingsNotFollowed(), before + 1);
  // A hole in a region needs an entry: the region is dropped, so the account may miss
  // bytes but never holds unmapped ones.
  NoteMapping(Page(1), kPage, false);
  EXPECT_EQ(Reserved(), pages(3 * kRegions - 3));
  EXPECT_EQ(MappingsNotFollowed(), before + 2);
  NoteMapping(Page(5), kPage, false);  // room for one split now
  EXPECT_EQ(Reserved(), pages(3 * kRegions - 4));
  NoteMapping(Page(7), kPage, true);  // a gap filled joins its neighbours: no entry needed
  NoteMapping(Page(4 * kRegions - 1), kPage, true);  // after the last: joins it
  EXPECT_EQ(Reserved(), pages(3 * kRegions - 2));
  EXPECT_EQ(MappingsNotFollowed(), before + 2);
}

TEST_F(MappedRegionsTest, RemappingMovesGrowsAndShrinksOnlyTheProgramsRegions) {
  NoteMapping(Page(0), 4 * kPage, true);
  NoteRemapping(Page(0), 4 * kPage, Page(100), 16 * kPage, /*old_kept=*/false);  // moved, grown
  EXPECT_EQ(Reserved(), static_cast<int64_t>(16 * kPage));
  NoteRemapping(Page(100), 16 * kPage, Page(100), 2 * kPage, false);  // shrunk in place
  EXPECT_EQ(Reserved(), static_cast<int64_t>(2 * kPage));
  NoteRemapping(Page(100), 2 * kPage, Page(200), 2 * kPage, /*old_kept=*/true);  // DONTUNMAP
  EXPECT_EQ(Reserved(), static_cast<int64_t>(4 * kPage));
  NoteRemapping(Page(300), kPage, Page(400), 8 * kPage, false);  // not ours: a file, say
  EXPECT_EQ(Reserved(), static_cast<int64_t>(4 * kPage));
  NoteRemapping(Page(300), kPage, Page(100), kPage, false);  // not ours, over one of ours
  EXPECT_EQ(Reserved(), static_cast<int64_t>(3 * kPage));
}

TEST_F(MappedRegionsTest, ThreadsEditingAtOnceKeepAnExactAccount) {
  std::vector<std::thread> threads;
  for (uintptr_t t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int round = 0; round < 200; ++round) {
        for (uintptr_t i = 0; i < 50; ++i) NoteMapping(Page(t * 1000 + 2 * i), kPage, true);
        for (uintptr_t i = 0; i < 50; i += 2) NoteMapping(Page(t * 1000 + 2 * i), kPage, false);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(Reserved(), static_cast<int64_t>(4 * 25 * kPage));
}

}  // namespace
}  // namespace paddle_prof::internal
