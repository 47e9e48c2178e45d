// The memory timeline: which rows held memory at a place's high-water mark (at_peak),
// with the timeline and without it, and RowsAtPeak's replay of hand-made events; the
// summary's timeline of live bytes (PlaceTimeline), bounded, its peak always a point.
#include "memory_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
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

TEST_F(MemoryTest, TheTimelineHasAPointPerAllocationAndFreeWithinItsBound) {
  EnableProfiler(ProfilerState::kCPU);
  void* weights = cpu_.Allocate(300);
  void* workspace = cpu_.Allocate(500);
  cpu_.Free(workspace);
  void* small = cpu_.Allocate(100);
  const Report report = StopProfiler();
  const int64_t start = PlaceOf(report, "CPU").start_bytes;
  const TimelinePoints& cpu = report.timeline.at("CPU");
  EXPECT_EQ(cpu.bytes,
            (std::vector<int64_t>{start, start + 300, start + 800, start + 300, start + 400}));
  ASSERT_EQ(cpu.t_ms.size(), 5u);
  EXPECT_EQ(cpu.t_ms[0], 0);
  EXPECT_TRUE(std::is_sorted(cpu.t_ms.begin(), cpu.t_ms.end()));
  EXPECT_LE(cpu.t_ms.back(), report.wall_ms);
  EXPECT_EQ(report.timeline.size(), report.places.size());  // a key per place
  cpu_.Free(weights);
  cpu_.Free(small);
}

// 40,000 allocations and frees, ten blocks live at a time, one of them of 1 MiB.
TEST_F(MemoryTest, PastItsBoundTheTimelineKeepsThePeakWhateverTheTracesBound) {
  gflags::FlagSaver restore_flags;
  const std::string path = testing::TempPath("timeline_bounded");
  for (const int64_t trace_bound : {4, 0}) {
    FLAGS_paddle_prof_trace_counter_points = trace_bound;
    EnableProfiler(ProfilerState::kCPU);
    int64_t live = 0;
    int64_t highest = 0;
    std::deque<std::pair<void*, int64_t>> held;
    auto free_oldest = [&] {
      cpu_.Free(held.front().first);
      live -= held.front().second;
      held.pop_front();
    };
    for (int i = 0; i < 20000; ++i) {
      const int64_t size = i == 12345 ? 1 << 20 : 64 + (i * 37 % 101) * 8;
      held.emplace_back(cpu_.Allocate(size), size);
      live += size;
      highest = std::max(highest, live);
      if (held.size() > 10) free_oldest();
    }
    while (!held.empty()) free_oldest();
    const Report report = StopProfiler(EventSortingKey::kTotal, path);
    const PlaceSummary& place = PlaceOf(report, "CPU");
    const TimelinePoints& cpu = report.timeline.at("CPU");
    SCOPED_TRACE(trace_bound);
    EXPECT_EQ(place.peak_bytes, place.start_bytes + highest);
    EXPECT_EQ(*std::max_element(cpu.bytes.begin(), cpu.bytes.end()), place.peak_bytes);
    ASSERT_EQ(cpu.t_ms.size(), cpu.bytes.size());
    EXPECT_LE(cpu.bytes.size(), 2000u);
    EXPECT_GT(cpu.bytes.size(), 100u);  // bucketed: a fraction of the 40,001 moments
    EXPECT_EQ(cpu.t_ms.front(), 0);
    EXPECT_EQ(cpu.bytes.front(), place.start_bytes);
    EXPECT_EQ(cpu.bytes.back(), place.end_bytes);
    EXPECT_TRUE(std::is_sorted(cpu.t_ms.begin(), cpu.t_ms.end()));
  }
  testing::RemoveProfileFiles(path);
}

// No allocation or free is replayed: the peak the allocator counted is still a point, at
// the replay's highest, the end bytes, just before them.
TEST_F(MemoryTest, WithoutTheMemoryTimelineTheTrackedPeakIsStillAPoint) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_memory_timeline = false;
  EnableProfiler(ProfilerState::kCPU);
  void* out = Conv2d();
  const Report report = StopProfiler();
  const PlaceSummary& place = PlaceOf(report, "CPU");
  const int64_t start = place.start_bytes;
  EXPECT_EQ(place.peak_bytes, start + 1310720);
  const TimelinePoints& cpu = report.timeline.at("CPU");
  EXPECT_EQ(cpu.bytes, (std::vector<int64_t>{start, start + 1310720, start + 262144}));
  EXPECT_EQ(cpu.t_ms, (std::vector<double>{0, report.wall_ms, report.wall_ms}));
  cpu_.Free(out);
}

}  // namespace

namespace internal {
namespace {

// An allocation (delta > 0) or free on `place`, owned by `name` and `tag`.
MemoryEvent Event(uint64_t tick, int place, int64_t delta, const char* name,
                  const char* tag = nullptr) {
  MemoryEvent e{};
  e.tick = tick;
  e.place = static_cast<int16_t>(place);
  e.delta = delta;
  e.name = name;
  e.tag = tag;
  e.alloc_thread = -1;
  return e;
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

// Ticks of 1 µs from 0 to 19,969: past the bound, 1,997 buckets of 10 ticks, one event
// per tick, rising 2 and falling 1 by turns, with a spike of a million at 5,005 and a
// last event that falls.
Collection RisingWindow() {
  Collection c;
  c.end_tick = 19969;
  c.ns_per_tick = 1000;
  c.places.push_back({"CPU", 0, 1000, 0, 0, {}, std::nullopt});
  c.places.push_back({"GPU", 12, 7, 9, 0, {}, std::nullopt});  // no events
  int64_t live = 1000;
  for (uint64_t tick = 1; tick <= 19969; ++tick) {
    int64_t delta = tick % 2 == 1 ? 2 : -1;
    if (tick == 5005) delta = 1000000;
    if (tick == 5006) delta = -1000000;
    if (tick == 19969) delta = -5;
    live += delta;
    c.memory_events.push_back(Event(tick, 0, delta, "op"));
  }
  c.places[0].end_bytes = live;
  return c;
}

TEST(PlaceTimelineTest, PastTheBoundEachBucketKeepsItsHighAndTheLastEventFollows) {
  const Collection c = RisingWindow();
  // The expected points: the start, each bucket's first highest, the last event.
  TimelinePoints expected{{0}, {1000}};
  int64_t live = 1000;
  int64_t highest = 0;
  for (const MemoryEvent& e : c.memory_events) {
    live += e.delta;
    const bool opens = e.tick == 1 || e.tick % 10 == 0;
    if (opens || live > expected.bytes.back()) {
      if (!opens) {
        expected.t_ms.pop_back();
        expected.bytes.pop_back();
      }
      expected.t_ms.push_back(c.TicksToMs(e.tick));
      expected.bytes.push_back(live);
    }
    highest = std::max(highest, live);
  }
  expected.t_ms.push_back(c.TicksToMs(19969));
  expected.bytes.push_back(live);
  ASSERT_EQ(expected.bytes.size(), 1999u);  // 1 + 1,997 + 1
  EXPECT_EQ(highest, 1000 + 1000000 + 2502);
  EXPECT_EQ(expected.bytes[501], highest);  // bucket 500's

  const TimelinePoints points = PlaceTimeline(c, 0, highest);
  EXPECT_EQ(points.t_ms, expected.t_ms);
  EXPECT_EQ(points.bytes, expected.bytes);

  // A peak above the replay's (the allocator counted it): one more point, the 2,000th,
  // right after the replay's highest.
  const TimelinePoints above = PlaceTimeline(c, 0, highest + 1);
  ASSERT_EQ(above.bytes.size(), 2000u);
  EXPECT_EQ(above.bytes[501], highest);
  EXPECT_EQ(above.bytes[502], highest + 1);
  EXPECT_EQ(above.t_ms[502], c.TicksToMs(5005));
  EXPECT_EQ(above.bytes[503], expected.bytes[502]);
}

TEST(PlaceTimelineTest, APeakAStepSawGoesAtThatStepsEnd) {
  Collection c = RisingWindow();
  c.steps.push_back({8000, {{"CPU", 5}}, {}, {}});
  c.steps.push_back({12000, {{"CPU", 2000000}, {"GPU", 12}}, {}, {}});
  const TimelinePoints points = PlaceTimeline(c, 0, 2000000);
  ASSERT_EQ(points.bytes.size(), 2000u);
  // Buckets 0 to 1,199 end at 11,999; bucket 1,200's high is at 12,009.
  EXPECT_EQ(points.t_ms[1200], c.TicksToMs(11999));
  EXPECT_EQ(points.t_ms[1201], c.TicksToMs(12000));
  EXPECT_EQ(points.bytes[1201], 2000000);
  EXPECT_EQ(points.t_ms[1202], c.TicksToMs(12009));

  const TimelinePoints gpu = PlaceTimeline(c, 1, 12);
  EXPECT_EQ(gpu.t_ms, (std::vector<double>{0, c.TicksToMs(12000), c.TicksToMs(19969)}));
  EXPECT_EQ(gpu.bytes, (std::vector<int64_t>{7, 12, 9}));
}

TEST(PlaceTimelineTest, APlaceWithoutEventsStartsAndEndsWithTheWindow) {
  const Collection c = RisingWindow();
  const TimelinePoints end_high = PlaceTimeline(c, 1, 9);
  EXPECT_EQ(end_high.t_ms, (std::vector<double>{0, c.TicksToMs(19969)}));
  EXPECT_EQ(end_high.bytes, (std::vector<int64_t>{7, 9}));
  // No step saw a peak of 12: it goes at the highest point, the end, just before it.
  const TimelinePoints above = PlaceTimeline(c, 1, 12);
  EXPECT_EQ(above.t_ms, (std::vector<double>{0, c.TicksToMs(19969), c.TicksToMs(19969)}));
  EXPECT_EQ(above.bytes, (std::vector<int64_t>{7, 12, 9}));
  // The start is the highest: right after it.
  Collection falls = RisingWindow();
  falls.places[1].start_bytes = 10;
  const TimelinePoints after_start = PlaceTimeline(falls, 1, 12);
  EXPECT_EQ(after_start.t_ms, (std::vector<double>{0, 0, c.TicksToMs(19969)}));
  EXPECT_EQ(after_start.bytes, (std::vector<int64_t>{10, 12, 9}));
}

TEST(PlaceTimelineTest, WithinTheBoundEveryAllocationAndFreeIsAPoint) {
  // Ticks of 0.4 ns: times in whole microseconds, rounded down, the end's exact.
  Collection c;
  c.end_tick = 5000000;
  c.ns_per_tick = 0.4;
  c.places.push_back({"CPU", 115, 100, 115, 0, {}, std::nullopt});
  c.memory_events = {Event(10, 0, 5, "a"), Event(3086417, 0, -10, "a"), Event(5000000, 0, 20, "b")};
  const TimelinePoints points = PlaceTimeline(c, 0, 115);
  EXPECT_EQ(points.t_ms, (std::vector<double>{0, 0, 1.234, c.TicksToMs(5000000)}));
  EXPECT_EQ(points.bytes, (std::vector<int64_t>{100, 105, 95, 115}));
}

// A block's allocation on `thread`, as ScanRecords gathers it: its own thread.
MemoryEvent Allocation(uint64_t tick, int thread) {
  MemoryEvent e = Event(tick, 0, 8, "a");
  e.alloc_thread = thread;
  e.alloc_tick = tick;
  return e;
}

TEST(AllocationEventTest, FoundFromAnyHintAmongTiesAndFreesAndNotOtherwise) {
  std::vector<MemoryEvent> events;
  for (uint64_t tick = 1; tick <= 1000; ++tick) events.push_back(Allocation(tick * 10, 0));
  // At tick 5000, a free, then two other threads' allocations: the ties are read.
  events.insert(events.begin() + 500, {Event(5000, 0, -8, "a"), Allocation(5000, 2), Allocation(5000, 1)});
  ASSERT_EQ(events[499].tick, 5000u);
  for (const size_t hint : {size_t{0}, size_t{1}, size_t{499}, size_t{502}, size_t{503},
                            size_t{900}, events.size() - 1, events.size(), size_t{1} << 40}) {
    SCOPED_TRACE(hint);
    EXPECT_EQ(AllocationEvent(events, 0, 5000, hint), 499u);
    EXPECT_EQ(AllocationEvent(events, 1, 5000, hint), 502u);
    EXPECT_EQ(AllocationEvent(events, 2, 5000, hint), 501u);
    EXPECT_EQ(AllocationEvent(events, 3, 5000, hint), events.size());  // no such thread's
    EXPECT_EQ(AllocationEvent(events, 0, 10, hint), 0u);                // the first
    EXPECT_EQ(AllocationEvent(events, 0, 10000, hint), events.size() - 1);  // the last
    EXPECT_EQ(AllocationEvent(events, 0, 5, hint), events.size());      // before them all
    EXPECT_EQ(AllocationEvent(events, 0, 5001, hint), events.size());   // between two
    EXPECT_EQ(AllocationEvent(events, 0, 10001, hint), events.size());  // after them all
  }
  EXPECT_EQ(AllocationEvent({}, 0, 10, 0), 0u);
}

}  // namespace
}  // namespace internal
}  // namespace paddle_prof
