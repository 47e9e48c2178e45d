// Percentiles of a row's calls (call_durations.h): exact nearest ranks over planned
// durations, past the spill into counts and across merges; the summary's counts bounded,
// merged over all calls, read back, and refused when they do not add up.
#include "call_durations.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "paddle_prof/paddle_prof.h"
#include "report_merge.h"
#include "summary_reader.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::BoundCounts;
using internal::CallDurations;
using internal::MergeCounts;
using internal::NearestRank;
using internal::PercentilesMs;

TEST(CallDurationsTest, NearestRankIsTheFirstCallWhoseShareReachesThePercent) {
  EXPECT_EQ(NearestRank(10, 10), 1);
  EXPECT_EQ(NearestRank(50, 10), 5);
  EXPECT_EQ(NearestRank(90, 10), 9);
  EXPECT_EQ(NearestRank(99, 10), 10);
  EXPECT_EQ(NearestRank(10, 1), 1);
  EXPECT_EQ(NearestRank(99, 100), 99);
  EXPECT_EQ(NearestRank(99, 101), 100);
  EXPECT_EQ(NearestRank(50, 3), 2);
}

TEST(CallDurationsTest, TenCallsInAnyOrderGiveTheirOwnRanks) {
  CallDurations d;
  for (const uint64_t ticks : {700, 100, 1000, 300, 200, 900, 400, 800, 600, 500}) d.Add(ticks * 10);
  const auto p = d.Percentiles();
  EXPECT_EQ(p[0], 1000u);   // rank 1
  EXPECT_EQ(p[1], 5000u);   // rank 5
  EXPECT_EQ(p[2], 9000u);   // rank 9
  EXPECT_EQ(p[3], 10000u);  // rank 10
  EXPECT_EQ(CallDurations().Percentiles(), (std::array<uint64_t, 4>{0, 0, 0, 0}));
}

// 10,000 calls: durations 1..10,000 ticks, so the rank-r call took r ticks. Past the
// spill, the short ones are counted and the long ones kept; either way the same ranks.
TEST(CallDurationsTest, ShortCountedAndLongKeptCallsGiveExactRanksAfterTheSpill) {
  CallDurations d;
  for (uint64_t t = 10000; t >= 1; --t) d.Add(t);  // descending: the first 1,024 are long
  EXPECT_EQ(d.calls(), 10000);
  EXPECT_EQ(d.Percentiles(), (std::array<uint64_t, 4>{1000, 5000, 9000, 9900}));
  // Halves merged: one spilled, one not; the ranks are over all calls.
  CallDurations low, high;
  for (uint64_t t = 1; t <= 5000; ++t) low.Add(t);
  for (uint64_t t = 5001; t <= 5500; ++t) high.Add(t);  // under the spill
  for (uint64_t t = 5501; t <= 10000; ++t) high.Add(t);
  CallDurations merged;
  merged.Merge(high);
  merged.Merge(low);
  EXPECT_EQ(merged.Percentiles(), (std::array<uint64_t, 4>{1000, 5000, 9000, 9900}));
}

TEST(CallDurationsTest, CountsAreExactNanosecondsUntilTooManyThenRoundedWithinTheirBits) {
  CallDurations d;
  for (uint64_t t = 1; t <= 300; ++t) d.Add(t * 1000);
  CallDurationCounts exact = d.Counts(1.0);
  EXPECT_EQ(exact.significant_bits, 0);
  ASSERT_EQ(exact.ns.size(), 300u);
  EXPECT_EQ(exact.ns.front(), 1000);
  EXPECT_EQ(exact.calls.front(), 1);
  EXPECT_EQ(PercentilesMs(exact), (std::array<double, 4>{0.030, 0.150, 0.270, 0.297}));

  CallDurations many;
  for (uint64_t t = 1; t <= 100000; ++t) many.Add(100000 + t);  // 100,001..200,000 ns
  const CallDurationCounts bounded = many.Counts(1.0);
  EXPECT_LE(bounded.ns.size(), CallDurationCounts::kMaxDistinct);
  ASSERT_GT(bounded.significant_bits, 0);
  int64_t calls = 0;
  for (const int64_t c : bounded.calls) calls += c;
  EXPECT_EQ(calls, 100000);
  const auto p = PercentilesMs(bounded);
  const auto exact_p = many.Percentiles();
  const double error = 1.0 / (int64_t{1} << (bounded.significant_bits - 1));
  for (size_t i = 0; i < p.size(); ++i) {
    const double truth = static_cast<double>(exact_p[i]) / 1e6;
    EXPECT_LE(p[i], truth);  // rounded down
    EXPECT_GE(p[i], truth * (1 - error)) << i;
  }
}

TEST(CallDurationsTest, MergedCountsHoldEveryCallOfBothRoundedAlike) {
  CallDurationCounts a{{10, 20, 30}, {1, 2, 3}, 0};
  CallDurationCounts b{{20, 40}, {5, 1}, 0};
  MergeCounts(b, &a);
  EXPECT_EQ(a.ns, (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(a.calls, (std::vector<int64_t>{1, 7, 3, 1}));
  EXPECT_EQ(a.significant_bits, 0);
  CallDurationCounts rounded{{12}, {4}, 2};  // 12 = 0b1100: two bits keep it
  MergeCounts(rounded, &a);                  // 10 -> 8, 20 -> 16, 30 -> 24, 40 -> 32
  EXPECT_EQ(a.ns, (std::vector<int64_t>{8, 12, 16, 24, 32}));
  EXPECT_EQ(a.calls, (std::vector<int64_t>{1, 4, 7, 3, 1}));
  EXPECT_EQ(a.significant_bits, 2);
  CallDurationCounts wide;
  for (int64_t ns = 1; ns <= 5000; ++ns) {
    wide.ns.push_back(ns * 7);
    wide.calls.push_back(1);
  }
  BoundCounts(&wide);
  EXPECT_LE(wide.ns.size(), CallDurationCounts::kMaxDistinct);
}

Report OneRow(int64_t pid, std::vector<uint64_t> ns) {
  CallDurations d;
  double total = 0;
  for (const uint64_t v : ns) {
    d.Add(v);
    total += static_cast<double>(v) / 1e6;
  }
  EventRow row = testing::TimedRow("op", static_cast<int64_t>(ns.size()), total, total,
                                   static_cast<double>(*std::min_element(ns.begin(), ns.end())) / 1e6,
                                   static_cast<double>(*std::max_element(ns.begin(), ns.end())) / 1e6);
  row.durations = d.Counts(1.0);
  internal::SetPercentiles(PercentilesMs(row.durations), &row);
  Report r;
  r.process.pid = pid;
  r.process.host = "node1";
  r.events = {row};
  return r;
}

TEST(CallDurationsTest, AMergedRowsPercentilesAreOverAllItsCallsAndSurviveTheSummary) {
  // Process 1 ran the calls of 1..10 ms, process 2 those of 11..20 ms: the merged p50 is
  // 10 ms (rank 10 of 20), which neither input's percentiles show.
  std::vector<uint64_t> first, second;
  for (uint64_t ms = 1; ms <= 10; ++ms) first.push_back(ms * 1000000);
  for (uint64_t ms = 11; ms <= 20; ++ms) second.push_back(ms * 1000000);
  std::vector<Report> inputs;
  for (const Report& r : {OneRow(1, first), OneRow(2, second)}) {
    inputs.push_back(internal::ReportFromJson(r.ToJson(), "input"));
  }
  const Report merged = internal::MergeReports(inputs, EventSortingKey::kTotal);
  const EventRow& op = testing::Row(merged, "op");
  EXPECT_EQ(op.calls, 20);
  EXPECT_DOUBLE_EQ(op.p10_ms, 2.0);
  EXPECT_DOUBLE_EQ(op.p50_ms, 10.0);
  EXPECT_DOUBLE_EQ(op.p90_ms, 18.0);
  EXPECT_DOUBLE_EQ(op.p99_ms, 20.0);
  const Report read = internal::ReportFromJson(merged.ToJson(), "merged");
  const EventRow& again = testing::Row(read, "op");
  EXPECT_EQ(again.durations.ns, op.durations.ns);
  EXPECT_DOUBLE_EQ(again.p50_ms, 10.0);
  EXPECT_NE(merged.Table(true).find("P50"), std::string::npos);
}

TEST(CallDurationsTest, DurationsThatDoNotAddUpToTheRowsCallsAreRefused) {
  std::string text = OneRow(1, {1000, 2000, 3000}).ToJson();
  const std::string calls = "\"calls\":[1,1,1]";
  const size_t at = text.find(calls);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, calls.size(), "\"calls\":[1,1,2]");
  try {
    internal::ReportFromJson(text, "edited.summary.json");
    FAIL() << "read durations of 4 calls for a row of 3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'durations'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paddle_prof
