// RecordEvent and its macro as a framework uses them.
#include "paddle_prof/record_event.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>

#include "scope_backdate.h"
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

// A std::string_view name is interned: its buffer may hold another name by the next
// call, and a name used again in a later window (whose first scope frees the names of
// the one before) is interned again.
TEST(RecordEventTest, AStringViewNameIsInternedAcrossCallsAndWindows) {
  char buffer[16];
  const auto scope_named = [&buffer](const char* name) {
    std::strcpy(buffer, name);
    RecordEvent event{std::string_view(buffer)};
  };
  EnableProfiler(ProfilerState::kCPU);
  scope_named("alpha");
  scope_named("alpha");
  scope_named("beta");
  scope_named("alphb");
  ResetProfiler();
  for (int i = 0; i < 3; ++i) scope_named("alpha");
  { RecordEvent tagged(std::string_view(buffer), std::string("[4, 4]")); }
  const Report report = StopProfiler();
  EXPECT_EQ(report.events.size(), 2u);
  EXPECT_EQ(Row(report, "alpha").calls, 3);
  EXPECT_EQ(Row(report, "alpha", "[4, 4]").calls, 1);
  EnableProfiler(ProfilerState::kCPU);
  scope_named("alpha");
  scope_named("beta");
  scope_named("alphb");
  const Report next = StopProfiler();
  EXPECT_EQ(next.events.size(), 3u);
  for (const char* name : {"alpha", "beta", "alphb"}) EXPECT_EQ(Row(next, name).calls, 1);
}

TEST(RecordEventTest, OpenScopesBackdatedBeginWhenTheirWorkDidButNotBeforeTheScopeAround) {
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent outer("outer");
    testing::Spin(2000);
    const uint64_t began = internal::ScopeTickNow();
    testing::Spin(3000);
    RecordEvent layer("layer");
    RecordEvent node("node");
    internal::BackdateOpenScopes(2, began);  // both: the 3 ms before they opened too
    testing::Spin(1000);
    {
      RecordEvent late("late");
      internal::BackdateOpenScopes(1, 0);  // never before the scope around it
    }
  }
  const Report report = StopProfiler();
  EXPECT_GE(Row(report, "node").total_ms, 3.5);
  EXPECT_GE(Row(report, "layer").total_ms, Row(report, "node").total_ms);
  EXPECT_LE(Row(report, "layer").total_ms, Row(report, "outer").total_ms - 1.5);
  EXPECT_LE(Row(report, "late").total_ms, Row(report, "node").total_ms);
}

}  // namespace
}  // namespace paddle_prof
