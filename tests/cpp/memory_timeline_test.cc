// The memory timeline: which rows held memory at a place's high-water mark (at_peak),
// with the timeline and without it, and RowsAtPeak's replay of hand-made events.
#include "memory_timeline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "event_record.h"
#include "flags.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Cpu;
using testing::MemoryTest;
using testing::PlaceOf;
using testing::Row;

TEST_F(MemoryTest, AtPeakNamesTheRowsLiveAtTheHighWaterMark) {
  EnableProfiler(ProfilerState::kCPU);
  void* weights;
  {
    RecordEvent e("load_weights");
    weights = cpu_.Allocate(300);
  }
  {
    RecordEvent e("matmul", "[8, 8]");
    void* workspace = cpu_.Allocate(500);
    cpu_.Free(workspace);
  }
  void* small = cpu_.Allocate(100);  // no event: after the peak, not part of it
  const Report report = StopProfiler();
  const PlaceSummary& place = PlaceOf(report, "CPU");
  EXPECT_EQ(place.peak_bytes - place.start_bytes, 800);
  ASSERT_GE(place.at_peak.size(), 2u);
  EXPECT_EQ(place.at_peak[0].name, "matmul");
  EXPECT_EQ(place.at_peak[0].tag, "[8, 8]");
  EXPECT_EQ(place.at_peak[0].bytes, 500);
  EXPECT_EQ(place.at_peak[1].name, "load_weights");
  EXPECT_EQ(place.at_peak[1].bytes, 300);
  EXPECT_EQ(Cpu(Row(report, "[no event]")).live_bytes, 100);
  cpu_.Free(weights);
  cpu_.Free(small);
}

TEST_F(MemoryTest, WithoutTheTimelineFiguresStayExactAndAtPeakIsLeftOut) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_memory_timeline = false;
  void* weights = cpu_.Allocate(4096);
  EnableProfiler(ProfilerState::kCPU);
  void* out = Conv2d();
  const Report report = StopProfiler();
  EXPECT_EQ(Cpu(Row(report, "conv2d")).peak_bytes, 1310720);
  EXPECT_EQ(Cpu(Row(report, "conv2d")).live_bytes, 262144);
  EXPECT_EQ(PlaceOf(report, "CPU").peak_bytes - PlaceOf(report, "CPU").start_bytes, 1310720);
  ASSERT_EQ(PlaceOf(report, "CPU").at_peak.size(), 1u);  // only what predates the window
  EXPECT_EQ(PlaceOf(report, "CPU").at_peak[0].name, "[before profiling]");
  cpu_.Free(out);
  cpu_.Free(weights);
}

}  // namespace

namespace internal {
namespace {

// An allocation (delta > 0) or free on `place`, owned by `name` and `tag`.
MemoryEvent Event(uint64_t tick, int place, int64_t delta, const char* name,
                  const char* tag = nullptr) {
  return {tick, place, delta, name, tag};
}

// "name @tag bytes, ..." in the order RowsAtPeak returned them.
std::string Rows(const std::vector<RowBytes>& rows) {
  std::string out;
  for (const RowBytes& r : rows) {
    out += (out.empty() ? "" : ", ") + r.name + (r.tag ? " @" + *r.tag : "") + " " +
           std::to_string(r.bytes);
  }
  return out;
}

TEST(RowsAtPeakTest, RowsLiveAtTheHighestTotalOfTheirPlaceLargestFirst) {
  const std::vector<MemoryEvent> events = {
      Event(1, 0, 300, "load_weights"),     Event(2, 1, 10000, "other_place"),
      Event(3, 0, 500, "matmul", "[8, 8]"), Event(4, 0, -500, "matmul", "[8, 8]"),
      Event(5, 0, 200, "after_the_peak"),
  };
  int64_t highest = -1;
  // Place 0 runs 100, 400, 900, 400, 600.
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 100, &highest)),
            "matmul @[8, 8] 500, load_weights 300, [before profiling] 100");
  EXPECT_EQ(highest, 900);
  EXPECT_EQ(Rows(RowsAtPeak(events, 1, 0, &highest)), "other_place 10000");
  EXPECT_EQ(highest, 10000);
}

TEST(RowsAtPeakTest, TheFirstMomentOfTheHighestTotalIsThePeak) {
  // 100, 0, 100: the second 100 is no higher than the first.
  const std::vector<MemoryEvent> events = {Event(1, 0, 100, "a"), Event(2, 0, -100, "a"),
                                           Event(3, 0, 100, "b")};
  int64_t highest = -1;
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 0, &highest)), "a 100");
  EXPECT_EQ(highest, 100);
}

TEST(RowsAtPeakTest, EqualBytesAreOrderedByNameThenTag) {
  const std::vector<MemoryEvent> events = {Event(1, 0, 50, "b"), Event(2, 0, 50, "a", "[2]"),
                                           Event(3, 0, 50, "a")};
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 50)), "[before profiling] 50, a 50, a @[2] 50, b 50");
}

TEST(RowsAtPeakTest, AnEmptyTagIsARowApartFromNoTag) {
  const std::vector<MemoryEvent> events = {Event(1, 0, 50, "a", ""), Event(2, 0, 30, "a")};
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 0)), "a @ 50, a 30");
}

TEST(RowsAtPeakTest, FreesOfBlocksFromBeforeTheWindowLowerItsStartBytes) {
  // 1000 at the start, 600 after the free, 1200 at the peak.
  std::vector<MemoryEvent> events = {Event(1, 0, -400, kBeforeWindowName), Event(2, 0, 600, "a")};
  int64_t highest = -1;
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 1000, &highest)), "[before profiling] 600, a 600");
  EXPECT_EQ(highest, 1200);
  // 1000, 600, 800: the start was the highest, so only what predates the window held it.
  events[1].delta = 200;
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 1000, &highest)), "[before profiling] 1000");
  EXPECT_EQ(highest, 1000);
}

TEST(RowsAtPeakTest, NoEventOwnsUnnamedBlocksAndEmptyRowsAreLeftOut) {
  // 10, 0, 30: at the peak "a" holds nothing any more.
  const std::vector<MemoryEvent> events = {Event(1, 0, 10, "a"), Event(2, 0, -10, "a"),
                                           Event(3, 0, 20, "b"), Event(3, 0, 10, nullptr)};
  int64_t highest = -1;
  EXPECT_EQ(Rows(RowsAtPeak(events, 0, 0, &highest)), "b 20, [no event] 10");
  EXPECT_EQ(highest, 30);
  EXPECT_EQ(Rows(RowsAtPeak({}, 0, 0, &highest)), "");
  EXPECT_EQ(highest, 0);
}

}  // namespace
}  // namespace internal
}  // namespace paddle_prof
