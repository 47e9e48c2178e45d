// The per-thread recorder: its stack of open scopes (ends out of order, ends on another
// thread, the depth bound) and its counters, through RecordEvent.
#include "thread_recorder.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "paddle_prof/profiler.h"
#include "paddle_prof/record_event.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::ExpectTimeInvariants;
using testing::HasWarning;
using testing::Row;

void Recurse(int depth) {
  RecordEvent e("recurse");
  if (depth > 1) Recurse(depth - 1);
}

TEST(ProfilerTest, AScopeEndingBeforeItsInnerScopesClosesThem) {
  EnableProfiler(ProfilerState::kCPU);
  auto outer = std::make_unique<RecordEvent>("outer");
  auto middle = std::make_unique<RecordEvent>("middle");
  auto inner = std::make_unique<RecordEvent>("inner");
  outer.reset();  // closes inner and middle at this moment
  inner.reset();
  middle.reset();
  { RecordEvent after("after"); }
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "outer").calls, 1);
  EXPECT_EQ(Row(report, "middle").calls, 1);
  EXPECT_EQ(Row(report, "inner").calls, 1);
  EXPECT_EQ(Row(report, "after").calls, 1);
  EXPECT_NEAR(Row(report, "outer").self_ms,
              Row(report, "outer").total_ms - Row(report, "middle").total_ms, 1e-9);
  EXPECT_TRUE(HasWarning(report, "1 scope(s) ended while scopes opened after them"));
  ExpectTimeInvariants(report);
}

TEST(ProfilerTest, AScopeEndedOnAnotherThreadIsLeftOut) {
  EnableProfiler(ProfilerState::kCPU);
  auto moved = std::make_unique<RecordEvent>("moved");
  std::thread([&moved] { moved.reset(); }).join();
  { RecordEvent ok("ok"); }  // closes nothing it should not: "moved" is still open here
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "ok").calls, 1);
  EXPECT_EQ(report.events.size(), 1u);
  EXPECT_TRUE(HasWarning(report, "ended on a thread other than the one that began them"));
  EXPECT_FALSE(HasWarning(report, "still open")) << "the abandoned scope was dropped";
  // The thread's stack is clean again: a later scope sits at depth 0, nested in nothing.
  EnableProfiler(ProfilerState::kCPU);
  Recurse(256);
  EXPECT_EQ(StopProfiler().dropped_events, 0);
}

TEST(ProfilerTest, NestingPastTheDepthBoundIsCountedNotCorrupted) {
  EnableProfiler(ProfilerState::kCPU);
  Recurse(300);
  { RecordEvent after("after"); }
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "recurse").calls, 256);  // every call counts, as Paddle and PyTorch do
  EXPECT_EQ(Row(report, "after").calls, 1);
  EXPECT_EQ(report.dropped_events, 44);
  ExpectTimeInvariants(report);
}

}  // namespace
}  // namespace paddle_prof
