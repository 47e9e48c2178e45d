// The per-thread recorder: its stack of open scopes (ends out of order, ends on another
// thread, the depth bound) and its counters, through RecordEvent and the calling thread's
// recorder.
#include "thread_recorder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "scope_memory.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::ThreadRecorder;
using testing::Address;
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

constexpr int kDepthBound = static_cast<int>(ThreadRecorder::kMaxDepth);

TEST(ThreadRecorderTest, ScopesUpToTheDepthBoundAreKeptAndOnePastItIsDropped) {
  EnableProfiler(ProfilerState::kCPU);
  Recurse(kDepthBound);
  const Report at_the_bound = StopProfiler();
  EXPECT_EQ(Row(at_the_bound, "recurse").calls, kDepthBound);
  EXPECT_EQ(at_the_bound.dropped_events, 0);
  EnableProfiler(ProfilerState::kCPU);
  Recurse(kDepthBound + 1);
  const Report past_it = StopProfiler();
  EXPECT_EQ(Row(past_it, "recurse").calls, kDepthBound);
  EXPECT_EQ(past_it.dropped_events, 1);
}

TEST(ThreadRecorderTest, DroppedScopesAreCountedInTheirWindowOnly) {
  EnableProfiler(ProfilerState::kCPU);
  Recurse(kDepthBound + 3);
  const Report dropped = StopProfiler();
  EXPECT_EQ(dropped.dropped_events, 3);
  EXPECT_TRUE(HasWarning(dropped, "3 calls not recorded")) << dropped.Table();
  // Dropped before a reset: the window after it starts from none.
  EnableProfiler(ProfilerState::kCPU);
  Recurse(kDepthBound + 3);
  ResetProfiler();
  { RecordEvent e("after_reset"); }
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "after_reset").calls, 1);
  EXPECT_EQ(report.dropped_events, 0);
  EXPECT_TRUE(report.warnings.empty()) << report.Table();
}

TEST(ThreadRecorderTest, EachForcedOrForeignEndIsCountedOnce) {
  EnableProfiler(ProfilerState::kCPU);
  auto outer = std::make_unique<RecordEvent>("outer");
  auto middle = std::make_unique<RecordEvent>("middle");
  auto inner = std::make_unique<RecordEvent>("inner");
  outer.reset();  // one end that closes two scopes
  inner.reset();  // closed already: nothing more to count
  middle.reset();
  auto first = std::make_unique<RecordEvent>("first");
  auto second = std::make_unique<RecordEvent>("second");
  std::thread([&] {
    second.reset();
    first.reset();
  }).join();
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 3u) << report.Table();
  for (const char* closed : {"outer", "middle", "inner"}) EXPECT_EQ(Row(report, closed).calls, 1);
  ASSERT_EQ(report.warnings.size(), 2u) << report.Table();
  EXPECT_EQ(report.warnings[0],
            "1 scope(s) ended while scopes opened after them were still open; those were closed "
            "at that moment.");
  EXPECT_EQ(report.warnings[1],
            "2 scope(s) ended on a thread other than the one that began them; they are left out.");
}

TEST(ThreadRecorderTest, AScopeOnMorePlacesThanItHasSlotsForCountsWhatItLoses) {
  constexpr int kPlaces = internal::ScopeMemory::kSlots + 1;
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e("wide");
    for (int i = 0; i < kPlaces; ++i) RecordAlloc(CUDAPlace(i), Address(i), 100);
    // The last place's allocation and its free find no slot.
    for (int i = 0; i < kPlaces; ++i) RecordFree(CUDAPlace(i), Address(i));
  }
  const Report report = StopProfiler();
  const EventRow& wide = Row(report, "wide");
  EXPECT_EQ(wide.memory.size(), static_cast<size_t>(kPlaces - 1));
  EXPECT_EQ(wide.memory.count("CUDA:" + std::to_string(kPlaces - 1)), 0u);
  EXPECT_EQ(testing::MemoryOn(wide, "CUDA:0").alloc_bytes, 100);
  EXPECT_TRUE(
      HasWarning(report, "2 scope memory figure(s) lost: a scope touched more than 4 places."))
      << report.Table();
}

}  // namespace
}  // namespace paddle_prof
