// Tying GPU work to the calls that launched it, on hand-made records: CorrelateGpu's
// launches and what it leaves out, and MergeIntervals' union of GPU time.
#include "gpu_correlation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "collection.h"
#include "event_buffer.h"
#include "event_record.h"
#include "gpu_activity.h"

namespace paddle_prof::internal {
namespace {

using Intervals = std::vector<TickInterval>;

TEST(MergeIntervalsTest, OverlappingIntervalsCountOnce) {
  Intervals v = {{10, 20}, {15, 30}, {0, 5}};
  EXPECT_EQ(MergeIntervals(&v), 25u);
  EXPECT_EQ(v, (Intervals{{0, 5}, {10, 30}}));
  v = {{0, 100}, {10, 20}, {20, 100}, {10, 20}};  // held inside, and repeated
  EXPECT_EQ(MergeIntervals(&v), 100u);
  EXPECT_EQ(v, (Intervals{{0, 100}}));
}

TEST(MergeIntervalsTest, AdjacentIntervalsJoinAndAGapKeepsThemApart) {
  Intervals v = {{5, 8}, {0, 5}};
  EXPECT_EQ(MergeIntervals(&v), 8u);
  EXPECT_EQ(v, (Intervals{{0, 8}}));
  v = {{6, 8}, {0, 5}};
  EXPECT_EQ(MergeIntervals(&v), 7u);
  EXPECT_EQ(v, (Intervals{{0, 5}, {6, 8}}));
}

TEST(MergeIntervalsTest, EmptyAndReversedIntervalsCountNothing) {
  Intervals v;
  EXPECT_EQ(MergeIntervals(&v), 0u);
  EXPECT_TRUE(v.empty());
  v = {{5, 5}, {9, 3}, {1, 2}};
  EXPECT_EQ(MergeIntervals(&v), 1u);
  EXPECT_EQ(v, (Intervals{{1, 2}}));
}

// A buffer of calls, each followed by the id its scope pushed, as a recorder writes them
// while the GPU is traced.
struct Calls {
  void Add(const char* name, bool cut, uint64_t start, uint64_t end, uint64_t scope_id) {
    ASSERT_TRUE(buffer->Append(EventRecord::Call(name, nullptr, 0, cut, start, end)));
    ASSERT_TRUE(buffer->Append(EventRecord::GpuScope(scope_id)));
  }
  ThreadSnapshot Snapshot(int index) const {
    ThreadSnapshot t;
    t.index = index;
    t.buffer = buffer.get();
    t.size = buffer->Size();
    return t;
  }
  std::unique_ptr<EventBuffer> buffer = std::make_unique<EventBuffer>();
};

GpuActivity Kernel(uint32_t correlation, uint64_t start, uint64_t end) {
  GpuActivity a;
  a.name = "kernel";
  a.start = start;
  a.end = end;
  a.correlation = correlation;
  return a;
}

TEST(CorrelateGpuTest, EachActivityGoesToTheReportedCallThatLaunchedIt) {
  Calls main_thread, worker;
  main_thread.Add("a", false, 1, 10, GpuScopeId(0, 1));        // record 0
  main_thread.Add("cut", true, 0, 20, GpuScopeId(0, 2));       // began before a reset
  main_thread.Add("late", false, 30, 2000, GpuScopeId(0, 3));  // ended after the window
  main_thread.Add("b", false, 40, 50, GpuScopeId(0, 4));       // record 6
  worker.Add("c", false, 5, 15, GpuScopeId(1, 1));             // record 0
  Collection c;
  c.end_tick = 1000;
  c.threads = {main_thread.Snapshot(0), worker.Snapshot(1)};
  c.gpu.activities = {Kernel(1, 100, 110), Kernel(2, 100, 110), Kernel(3, 100, 110),
                      Kernel(4, 100, 107), Kernel(5, 100, 110), Kernel(6, 200, 210),
                      Kernel(7, 100, 110), Kernel(8, 100, 110), Kernel(9, 200, 150)};
  c.gpu.scope_of_call = {{1, GpuScopeId(0, 1)}, {2, GpuScopeId(0, 2)}, {3, GpuScopeId(0, 3)},
                         {5, GpuScopeId(0, 4)}, {6, GpuScopeId(0, 1)}, {7, GpuScopeId(1, 1)},
                         {8, GpuScopeId(5, 9)}};  // 4 and 9: launched with no scope open
  const GpuCorrelation g = CorrelateGpu(c);
  ASSERT_EQ(g.launch.size(), 9u);
  const int expected_thread[] = {0, -1, -1, -1, 0, 0, 1, -1, -1};
  const size_t expected_call[] = {0, 0, 0, 0, 6, 0, 0, 0, 0};
  for (size_t a = 0; a < g.launch.size(); ++a) {
    EXPECT_EQ(g.launch[a].thread, expected_thread[a]) << a;
    EXPECT_EQ(g.launch[a].call, expected_call[a]) << a;
  }
  ASSERT_EQ(g.launched_by.size(), 2u);
  EXPECT_EQ(g.launched_by[0],
            (std::unordered_map<size_t, std::vector<size_t>>{{0, {0, 5}}, {6, {4}}}));
  EXPECT_EQ(g.launched_by[1], (std::unordered_map<size_t, std::vector<size_t>>{{0, {6}}}));
  EXPECT_EQ(g.no_event, 2);
  EXPECT_EQ(g.no_event_ticks, 7u);  // the reversed one counts no time
  EXPECT_EQ(g.unrecorded, 3);       // cut, late, and a scope no call names
}

TEST(CorrelateGpuTest, NoActivitiesLeaveOneEmptyMapPerThread) {
  Calls main_thread;
  main_thread.Add("a", false, 1, 10, GpuScopeId(0, 1));
  Collection c;
  c.end_tick = 1000;
  c.threads = {main_thread.Snapshot(0), main_thread.Snapshot(1), main_thread.Snapshot(2)};
  const GpuCorrelation g = CorrelateGpu(c);
  EXPECT_TRUE(g.launch.empty());
  ASSERT_EQ(g.launched_by.size(), 3u);
  for (const auto& calls : g.launched_by) EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace paddle_prof::internal
