// RecordEvent and its macro as a framework uses them.
#include "paddle_prof/record_event.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Row;

void Op() {
  PADDLE_PROF_RECORD_EVENT("op");
  PADDLE_PROF_RECORD_EVENT("op_inner");  // a second macro in one block: distinct variables
}

TEST(RecordEventTest, MacroScopesLastUntilTheEndOfTheBlock) {
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 3; ++i) Op();
  const Report report = StopProfiler();
  EXPECT_EQ(Row(report, "op").calls, 3);
  EXPECT_EQ(Row(report, "op_inner").calls, 3);
  EXPECT_LE(Row(report, "op_inner").total_ms, Row(report, "op").total_ms);
}

TEST(RecordEventTest, IsProfilerEnabledFollowsTheWindow) {
  EXPECT_FALSE(IsProfilerEnabled());
  EnableProfiler(ProfilerState::kCPU);
  EXPECT_TRUE(IsProfilerEnabled());
  ResetProfiler();
  EXPECT_TRUE(IsProfilerEnabled());
  StopProfiler();
  EXPECT_FALSE(IsProfilerEnabled());
  ResetProfiler();  // a reset while off does nothing
  EXPECT_FALSE(IsProfilerEnabled());
}

TEST(RecordEventTest, AScopeBegunWhileOffStaysUnrecorded) {
  RecordEvent before("begun_while_off");
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent inside("inside"); }
  const Report report = StopProfiler();
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_EQ(Row(report, "inside").calls, 1);
  EXPECT_TRUE(report.warnings.empty());
}

}  // namespace
}  // namespace paddle_prof
