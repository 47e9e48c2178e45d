// The report builder on hand-made records: exact self times, cut and late calls,
// rounding invariants, and sorting by every key.
#include "report_builder.h"

#include <gtest/gtest.h>

#include <memory>

#include "record_scan.h"
#include "test_util.h"

namespace paddle_prof::internal {
namespace {

using paddle_prof::testing::ExpectTimeInvariants;
using paddle_prof::testing::HasWarning;
using paddle_prof::testing::Row;
using paddle_prof::testing::TimedRow;

// One tick is one millisecond, so expected times are exact.
class ReportBuilderTest : public ::testing::Test {
 protected:
  void Add(const char* name, uint32_t depth, uint64_t start, uint64_t end, bool cut = false,
           const char* tag = nullptr) {
    ASSERT_TRUE(buffer_->Append(EventRecord::Call(name, tag, depth, cut, start, end)));
  }
  Collection Make(uint64_t end_tick = 1000) {
    Collection c;
    c.start_tick = 0;
    c.end_tick = end_tick;
    c.ns_per_tick = 1e6;
    // The recorder began every call recorded in this window (cut ones began before).
    int64_t begun = 0;
    for (size_t i = 0; i < buffer_->Size(); ++i) {
      const EventRecord& r = (*buffer_)[i];
      begun += r.kind() == RecordKind::kCall && !r.cut();
    }
    c.threads.push_back({0, 1234, "main", buffer_.get(), 0, buffer_->Size(), begun + open_});
    ScanRecords(&c, /*calls=*/true);
    return c;
  }
  std::unique_ptr<EventBuffer> buffer_ = std::make_unique<EventBuffer>();
  int64_t open_ = 0;  // calls begun and never recorded
};

TEST_F(ReportBuilderTest, SelfTimeSubtractsDirectChildrenOnly) {
  // parent [0, 10] holds child [1, 7], which holds grandchild [2, 4]; then child [8, 9].
  Add("grandchild", 2, 2, 4);
  Add("child", 1, 1, 7);
  Add("child", 1, 8, 9);
  Add("parent", 0, 0, 10);
  const Report r = BuildReport(Make(), {EventSortingKey::kTotal});
  EXPECT_EQ(Row(r, "parent").total_ms, 10);
  EXPECT_EQ(Row(r, "parent").self_ms, 10 - 6 - 1);
  EXPECT_EQ(Row(r, "child").calls, 2);
  EXPECT_EQ(Row(r, "child").total_ms, 7);
  EXPECT_EQ(Row(r, "child").self_ms, 7 - 2);
  EXPECT_EQ(Row(r, "child").min_ms, 1);
  EXPECT_EQ(Row(r, "child").max_ms, 6);
  EXPECT_EQ(Row(r, "child").ave_ms, 3.5);
  EXPECT_EQ(Row(r, "grandchild").self_ms, 2);
  EXPECT_EQ(r.wall_ms, 1000);
  ExpectTimeInvariants(r);
}

TEST_F(ReportBuilderTest, ACutCallIsLeftOutButKeepsItsChildrenAway) {
  // "outer" began before the reset (cut); its child belongs to it, not to "next".
  Add("child", 1, 2, 5);
  Add("outer", 0, 0, 6, /*cut=*/true);
  Add("child", 1, 8, 9);
  Add("next", 0, 7, 10);
  const Report r = BuildReport(Make(), {EventSortingKey::kTotal});
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_EQ(Row(r, "child").calls, 2);
  EXPECT_EQ(Row(r, "next").self_ms, 3 - 1);
  EXPECT_TRUE(HasWarning(r, "1 call began before ResetProfiler()"));
}

TEST_F(ReportBuilderTest, ACallEndingAfterTheWindowIsLeftOut) {
  Add("inside", 1, 1, 2);
  Add("late", 0, 0, 20);
  const Report r = BuildReport(Make(/*end_tick=*/10), {EventSortingKey::kTotal});
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(Row(r, "inside").calls, 1);
  EXPECT_TRUE(HasWarning(r, "1 call still open when the profiler stopped"));
}

TEST_F(ReportBuilderTest, CallsBegunAndNeverRecordedAreLeftOutOnceWithTheLateOnes) {
  Add("inside", 1, 1, 2);
  Add("late", 0, 0, 20);
  open_ = 2;  // still open, or ended once the window had closed
  const Report r = BuildReport(Make(/*end_tick=*/10), {EventSortingKey::kTotal});
  EXPECT_TRUE(HasWarning(r, "3 calls still open when the profiler stopped")) << r.Table();
}

TEST_F(ReportBuilderTest, AverageStaysWithinMinAndMaxDespiteRounding) {
  for (int i = 0; i < 3; ++i) Add("same", 0, 10 * i, 10 * i + 7);
  Collection c = Make();
  c.ns_per_tick = 0.3;  // 7 ticks = 2.1 ns: not exact in binary
  const Report r = BuildReport(c, {EventSortingKey::kTotal});
  const EventRow& row = Row(r, "same");
  EXPECT_EQ(row.min_ms, row.max_ms);
  EXPECT_EQ(row.ave_ms, row.min_ms);
  ExpectTimeInvariants(r);
}

TEST_F(ReportBuilderTest, EqualNamesAtDifferentAddressesMerge) {
  const std::string copy = "conv2d";
  Add("conv2d", 0, 0, 1);
  Add(copy.c_str(), 0, 2, 4);
  const Report r = BuildReport(Make(), {EventSortingKey::kTotal});
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(Row(r, "conv2d").calls, 2);
  EXPECT_EQ(Row(r, "conv2d").total_ms, 3);
}

TEST_F(ReportBuilderTest, StepsAreTimedFromTheWindowStartOrThePreviousStep) {
  Collection c = Make();
  for (const uint64_t tick : {5, 12, 30}) c.steps.push_back({tick, {}, {}, {}});
  const Report r = BuildReport(c, {EventSortingKey::kTotal});
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].wall_ms, 5);
  EXPECT_EQ(r.steps[1].wall_ms, 7);
  EXPECT_EQ(r.steps[2].wall_ms, 18);
  EXPECT_EQ(r.steps[2].step, 2);
}

TEST_F(ReportBuilderTest, CallsReadAloneOrWithTheMemoryEventsReportAlike) {
  Add("child", 1, 1, 3, false, "[8]");
  ASSERT_TRUE(buffer_->Append(EventRecord::Memory(RecordKind::kAlloc, 0, "parent", nullptr, 4, 32)));
  Add("parent", 0, 0, 5);
  ASSERT_TRUE(buffer_->Append(EventRecord::Memory(RecordKind::kFree, 0, "parent", nullptr, 6, 32)));
  Add("late", 0, 7, 2000);
  Collection with_memory = Make();
  ASSERT_EQ(with_memory.thread_calls.size(), 1u);
  Collection alone = Make();
  ScanRecords(&alone, /*calls=*/false);  // as where a trace is written beside the report
  EXPECT_TRUE(alone.thread_calls.empty());
  ASSERT_EQ(alone.memory_events.size(), 2u);
  EXPECT_EQ(alone.memory_events[1].delta, -32);
  const Report a = BuildReport(with_memory, {EventSortingKey::kTotal});
  const Report b = BuildReport(alone, {EventSortingKey::kTotal});
  EXPECT_EQ(a.ToJson(), b.ToJson());
  EXPECT_EQ(Row(a, "child", "[8]").calls, 1);
  EXPECT_EQ(Row(a, "parent").self_ms, 3);
  EXPECT_TRUE(HasWarning(a, "1 call still open when the profiler stopped"));
}

TEST(SortRowsTest, EveryKeyOrdersLargestFirst) {
  auto row = [](const char* name, int64_t calls, double total, double self, double min, double max,
                int64_t peak, int64_t live) {
    EventRow r = TimedRow(name, calls, total, self, min, max);
    r.memory["CPU"].peak_bytes = peak;
    r.memory["CPU"].live_bytes = live;
    return r;
  };
  const std::vector<EventRow> rows = {row("a", 1, 9, 1, 9, 9, 10, 300),
                                      row("b", 5, 20, 20, 1, 8, 30, 0),
                                      row("c", 3, 6, 5, 2, 2, 20, 100)};
  const std::map<EventSortingKey, std::string> expected = {
      {EventSortingKey::kDefault, "bac"},   {EventSortingKey::kCalls, "bca"},
      {EventSortingKey::kTotal, "bac"},     {EventSortingKey::kSelf, "bca"},
      {EventSortingKey::kMin, "acb"},       {EventSortingKey::kMax, "abc"},
      {EventSortingKey::kAve, "abc"},       {EventSortingKey::kPeakMemory, "bca"},
      {EventSortingKey::kLiveMemory, "acb"}};
  for (const auto& [key, order] : expected) {
    std::vector<EventRow> sorted = rows;
    SortRows(key, &sorted);
    std::string names;
    for (const EventRow& r : sorted) names += r.name;
    EXPECT_EQ(names, order) << SortingKeyName(key);
  }
}

TEST(NamesTest, ParseAndPrintStatesAndKeys) {
  EXPECT_EQ(ParseSortingKey("peak_memory"), EventSortingKey::kPeakMemory);
  EXPECT_EQ(ParseSortingKey(""), EventSortingKey::kTotal);
  EXPECT_EQ(SortingKeyName(EventSortingKey::kDefault), "total");
  EXPECT_EQ(ParseProfilerState("GPU"), ProfilerState::kCUDA);
  EXPECT_EQ(ProfilerStateName(ProfilerState::kAll), "All");
  try {
    ParseSortingKey("totl");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'calls', 'total', 'self'"), std::string::npos);
  }
  EXPECT_THROW(ParseProfilerState("cpu"), std::invalid_argument);
}

}  // namespace
}  // namespace paddle_prof::internal
