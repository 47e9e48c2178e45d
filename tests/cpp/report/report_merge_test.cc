// Reports of several processes merged (report_merge.h): rows add up with their spread over
// the inputs, steps line up by index, stragglers are named, and a parent folds in its
// children.
#include "report_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "summary_reader.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::MergeChildren;
using internal::MergeReports;
using testing::HasWarning;
using testing::Memory;
using testing::Row;
using testing::TimedRow;

Report Input(int64_t pid, std::optional<int> rank, std::vector<EventRow> rows) {
  Report r;
  r.process.pid = pid;
  r.process.host = "node1";
  r.process.rank = rank;
  if (rank) r.process.world_size = 2;
  r.events = std::move(rows);
  return r;
}

StepSummary Step(int index, double wall_ms, int64_t peak) {
  StepSummary s;
  s.step = index;
  s.wall_ms = wall_ms;
  s.peak_bytes = {{"CPU", peak}};
  s.end_bytes = {{"CPU", peak / 2}};
  return s;
}

// Two ranks: conv2d on both, only_rank1 on rank 1 alone, [no event] (no calls) on both.
std::vector<Report> TwoRanks() {
  EventRow conv0 = TimedRow("conv2d", 2, 4, 3, 1.5, 2.5);
  conv0.memory["CPU"] = Memory(100, 200, 2, 100, 1, 100);
  EventRow none0 = TimedRow("[no event]", 0, 0, 0, 0, 0);
  none0.memory["CPU"] = Memory(10, 10, 1, 0, 0, 10);
  EventRow conv1 = TimedRow("conv2d", 3, 9, 6, 2, 4);
  conv1.memory["CPU"] = Memory(300, 300, 3, 250, 2, 50);
  EventRow none1 = none0;
  return {Input(100, 0, {conv0, none0}),
          Input(200, 1, {conv1, TimedRow("only_rank1", 1, 1, 1, 1, 1), none1})};
}

TEST(ReportMergeTest, SourcesAddUpOverEveryInputBeforeTheTopThreeAreKept) {
  // D falls fourth after two inputs and first after the third: it is kept whole.
  std::vector<Report> inputs;
  const std::vector<std::vector<SourceCalls>> sources = {
      {{"a.py:1 in f", 10}, {"b.py:1 in f", 9}, {"c.py:1 in f", 8}},
      {{"a.py:1 in f", 1}, {"d.py:1 in f", 7}},
      {{"d.py:1 in f", 7}}};
  for (int i = 0; i < 3; ++i) {
    EventRow row = TimedRow("op", 1, 1, 1, 1, 1);
    row.sources = sources[i];
    inputs.push_back(Input(100 + i, i, {row}));
  }
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  const std::vector<SourceCalls>& top = Row(merged, "op").sources;
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].frame, "d.py:1 in f");
  EXPECT_EQ(top[0].calls, 14);
  EXPECT_EQ(top[1].frame, "a.py:1 in f");
  EXPECT_EQ(top[1].calls, 11);
  EXPECT_EQ(top[2].frame, "b.py:1 in f");
}

TEST(ReportMergeTest, RowsSumTheirFiguresAndKeepTheExtremes) {
  const Report merged = MergeReports(TwoRanks(), EventSortingKey::kTotal);
  ASSERT_EQ(merged.events.size(), 3u);
  const EventRow& conv = merged.events[0];  // sorted by total: conv2d, only_rank1, [no event]
  EXPECT_EQ(conv.name, "conv2d");
  EXPECT_EQ(merged.events[1].name, "only_rank1");
  EXPECT_EQ(merged.events[2].name, "[no event]");
  EXPECT_EQ(conv.calls, 5);
  EXPECT_DOUBLE_EQ(conv.total_ms, 13);
  EXPECT_DOUBLE_EQ(conv.self_ms, 9);
  EXPECT_DOUBLE_EQ(conv.min_ms, 1.5);
  EXPECT_DOUBLE_EQ(conv.max_ms, 4);
  EXPECT_DOUBLE_EQ(conv.ave_ms, 2.6);
  EXPECT_DOUBLE_EQ(conv.ratio, 0.9);  // 9 of the 10 ms of self time
  EXPECT_DOUBLE_EQ(merged.events[1].ratio, 0.1);
  const MemoryStats& m = testing::Cpu(conv);
  EXPECT_EQ(m.peak_bytes, 300);
  EXPECT_EQ(m.alloc_bytes, 500);
  EXPECT_EQ(m.alloc_count, 5);
  EXPECT_EQ(m.free_bytes, 350);
  EXPECT_EQ(m.free_count, 3);
  EXPECT_EQ(m.live_bytes, 150);
  // A row with no calls bounds nothing: its zeros are no call's times.
  const EventRow& none = merged.events[2];
  EXPECT_EQ(none.calls, 0);
  EXPECT_EQ(none.min_ms, 0);
  EXPECT_EQ(testing::Cpu(none).live_bytes, 20);
  EXPECT_FALSE(conv.gpu_total_ms.has_value());  // null while every input's is
}

TEST(ReportMergeTest, EachRowSpreadsOverEveryInputByRank) {
  const Report merged = MergeReports(TwoRanks(), EventSortingKey::kTotal);
  const RowSpread& conv = *Row(merged, "conv2d").spread;
  EXPECT_EQ(conv.by, "rank");
  EXPECT_DOUBLE_EQ(conv.min_ms, 4);
  EXPECT_DOUBLE_EQ(conv.median_ms, 4);  // the lower of two middles
  EXPECT_DOUBLE_EQ(conv.max_ms, 9);
  EXPECT_EQ(conv.argmax, 1);
  const RowSpread& only = *Row(merged, "only_rank1").spread;
  EXPECT_DOUBLE_EQ(only.min_ms, 0);  // rank 0 has no such row: it counts 0 ms
  EXPECT_DOUBLE_EQ(only.max_ms, 1);
  EXPECT_EQ(only.argmax, 1);
}

TEST(ReportMergeTest, WithoutRanksTheSpreadIsByProcessAndTheMedianTheLowerMiddle) {
  std::vector<Report> inputs;
  const double totals[] = {3, 1, 40, 2};
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(Input(11 + i, std::nullopt,
                           {TimedRow("op", 1, totals[i], totals[i], totals[i], totals[i])}));
  }
  inputs[1].process.rank = 5;  // one rank is not enough to tell the inputs apart by rank
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  const RowSpread& spread = *merged.events[0].spread;
  EXPECT_EQ(spread.by, "process");
  EXPECT_DOUBLE_EQ(spread.min_ms, 1);
  EXPECT_DOUBLE_EQ(spread.median_ms, 2);  // sorted 1, 2, 3, 40: the lower middle
  EXPECT_DOUBLE_EQ(spread.max_ms, 40);
  EXPECT_EQ(spread.argmax, 13);
  EXPECT_TRUE(
      HasWarning(merged,
                 "node1 pid 13 is a straggler in op: 40.0 ms there against a median of 2.0 ms over "
                 "4 processes"));
  EXPECT_FALSE(merged.process.world_size.has_value());
}

TEST(ReportMergeTest, StragglersAreNamedLargestExcessFirst) {
  std::vector<Report> inputs = TwoRanks();
  inputs[0].events.push_back(TimedRow("slow_op", 1, 20.1, 20.1, 20.1, 20.1));
  inputs[1].events.push_back(TimedRow("slow_op", 1, 120.4, 120.4, 120.4, 120.4));
  EventRow tagged = TimedRow("matmul", 1, 3, 3, 3, 3);
  tagged.tag = "[8, 8]";
  inputs[1].events.push_back(tagged);
  inputs[1].events.push_back(TimedRow("close", 1, 1.4, 1.4, 1.4, 1.4));  // not 1.5x over 1.0
  inputs[0].events.push_back(TimedRow("close", 1, 1.0, 1.0, 1.0, 1.0));
  inputs[1].events.push_back(TimedRow("tiny", 1, 0.9, 0.9, 0.9, 0.9));  // under 1 ms more
  inputs[0].events.push_back(TimedRow("tiny", 1, 0.1, 0.1, 0.1, 0.1));
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  const std::vector<std::string> expected = {
      "rank 1 is a straggler in slow_op: 120.4 ms there against a median of 20.1 ms over 2 ranks",
      "rank 1 is a straggler in conv2d: 9.0 ms there against a median of 4.0 ms over 2 ranks",
      "rank 1 is a straggler in matmul [8, 8]: 3.0 ms there against a median of 0.0 ms over 2 "
      "ranks",
      "rank 1 is a straggler in only_rank1: 1.0 ms there against a median of 0.0 ms over 2 ranks"};
  EXPECT_EQ(merged.warnings, expected);
}

TEST(ReportMergeTest, StragglingOpsPastTenAreCounted) {
  std::vector<Report> inputs = {Input(1, 0, {}), Input(2, 1, {})};
  for (int i = 0; i < 12; ++i) {
    const double ms = 10 + i;
    inputs[1].events.push_back(TimedRow("op" + std::to_string(i), 1, ms, ms, ms, ms));
  }
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.warnings.size(), 11u);
  EXPECT_EQ(merged.warnings[0],
            "rank 1 is a straggler in op11: 21.0 ms there against a median of 0.0 ms over 2 ranks");
  EXPECT_EQ(merged.warnings[10].rfind("2 more stragglers", 0), 0u) << merged.warnings[10];
}

TEST(ReportMergeTest, StepsMergeByIndexWithEachInputsWallTime) {
  std::vector<Report> inputs = TwoRanks();
  inputs[0].steps = {Step(0, 20.1, 1000), Step(1, 20.0, 500), Step(2, 5.0, 10)};
  inputs[1].steps = {Step(0, 70.3, 800), Step(1, 70.0, 900)};
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.steps.size(), 3u);
  const StepSummary& first = merged.steps[0];
  EXPECT_DOUBLE_EQ(first.wall_ms, 70.3);
  EXPECT_EQ(first.slowest, 1);
  const std::map<std::string, double> by = {{"0", 20.1}, {"1", 70.3}};
  EXPECT_EQ(first.wall_ms_by, by);
  EXPECT_EQ(first.peak_bytes.at("CPU"), 1000);
  EXPECT_EQ(merged.steps[1].peak_bytes.at("CPU"), 900);
  EXPECT_EQ(merged.steps[1].end_bytes.at("CPU"), 450);
  EXPECT_EQ(merged.steps[2].slowest, 0);
  EXPECT_EQ(merged.steps[2].wall_ms_by.size(), 1u);
  EXPECT_TRUE(HasWarning(merged,
                         "rank 1 is a straggler in 2 of 3 steps (step 0: 70.3 ms against a median "
                         "of 20.1 ms over 2 ranks; step 1: 70.0 ms against a median of 20.0 ms "
                         "over 2 ranks)"));
}

// Under synchronous data parallelism every rank's step lasts as long as the slowest's:
// the others wait in communication, so the straggler is the one with the most time
// outside it, and communication rows never straggle themselves.
TEST(ReportMergeTest, AChildMergedIntoItsParentIsNotMergedAgain) {
  std::vector<Report> inputs = {Input(1, std::nullopt, {}), Input(2, std::nullopt, {})};
  inputs[0].summary_path = "/p/parent.json.summary.json";
  inputs[1].summary_path = "/p/parent.json.children/2.json.summary.json";
  inputs[0].processes.push_back({2, "worker", 0, 5, 1.0, inputs[1].summary_path});
  try {
    MergeReports(inputs, EventSortingKey::kTotal);
    ADD_FAILURE() << "merged a child twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "/p/parent.json.children/2.json.summary.json is the profile of pid 2, a child "
              "already merged into /p/parent.json.summary.json: merge the parent's profile "
              "alone");
  }
}

TEST(ReportMergeTest, TheStragglerIsTheRankTheOthersWaitedFor) {
  std::vector<Report> inputs = {Input(1, 0, {}), Input(2, 1, {})};
  inputs[0].steps = {Step(0, 55.0, 0)};
  inputs[0].steps[0].comm_ms = 52.0;
  inputs[1].steps = {Step(0, 54.5, 0)};
  inputs[1].steps[0].comm_ms = 1.5;
  inputs[0].events.push_back(TimedRow("gloo:all_reduce", 1, 52, 52, 52, 52));
  inputs[1].events.push_back(TimedRow("gloo:all_reduce", 1, 1.5, 1.5, 1.5, 1.5));
  inputs[0].events.push_back(TimedRow("DistributedDataParallel.forward", 1, 40, 40, 40, 40));
  inputs[1].events.push_back(TimedRow("DistributedDataParallel.forward", 1, 2, 2, 2, 2));
  inputs[1].events.push_back(TimedRow("slow_op", 1, 50, 50, 50, 50));
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.steps.size(), 1u);
  EXPECT_EQ(merged.steps[0].slowest, 1);
  EXPECT_DOUBLE_EQ(merged.steps[0].wall_ms, 55.0);
  EXPECT_DOUBLE_EQ(merged.steps[0].comm_ms, 1.5);
  const std::vector<std::string> expected = {
      "rank 1 is a straggler in slow_op: 50.0 ms there against a median of 0.0 ms over 2 ranks",
      "rank 1 is a straggler in 1 of 1 steps (step 0: 53.0 ms outside communication against a "
      "median of 3.0 ms over 2 ranks)"};
  EXPECT_EQ(merged.warnings, expected);
}

// Growth advice comes from each input's own records and is carried, named; the rest is
// advised on the merged figures; the straggler is the rank behind in steps, not the one
// whose op held a wait for it.
TEST(ReportMergeTest, AdviceIsCarriedOrAdvisedAnewAndNamesTheStragglingRank) {
  std::vector<Report> inputs = {Input(1, 0, {}), Input(2, 1, {})};
  inputs[0].steps = {Step(0, 55.0, 0)};
  inputs[0].steps[0].comm_ms = 52.0;
  inputs[1].steps = {Step(0, 54.5, 0)};
  inputs[1].steps[0].comm_ms = 1.5;
  inputs[0].events.push_back(TimedRow("gloo:all_reduce", 1, 52, 52, 52, 52));
  inputs[1].events.push_back(TimedRow("gloo:all_reduce", 1, 1.5, 1.5, 1.5, 1.5));
  inputs[0].events.push_back(TimedRow("backward", 1, 53, 1, 53, 53));  // holds the wait
  inputs[1].events.push_back(TimedRow("backward", 1, 2, 2, 2, 2));
  inputs[1].events.push_back(TimedRow("slow_op", 1, 50, 50, 50, 50));
  inputs[0].advice = {{"varying_shapes", "conv holds 3.00 MiB", "bin", int64_t{3} << 20, {}},
                      {"small_ops", "per input", "fuse", std::nullopt, 9.0}};
  inputs[0].notes = {"native: a caveat"};
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  std::vector<std::string> kinds, messages;
  for (const Advice& a : merged.advice) {
    kinds.push_back(a.kind);
    messages.push_back(a.message);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"varying_shapes", "straggler"}));
  EXPECT_EQ(messages[0], "rank 0: conv holds 3.00 MiB");
  EXPECT_EQ(messages[1],
            "rank 1 is behind the others in 1 of 1 steps and in 1 op, by 50.0 ms in all; worst: "
            "slow_op: 50.0 ms there against a median of 0.0 ms over 2 ranks.");
  EXPECT_EQ(merged.advice[1].ms, 50.0);
  EXPECT_TRUE(HasWarning(merged, "rank 0 is a straggler in backward"));  // a warning, no advice
  EXPECT_EQ(merged.notes, std::vector<std::string>{"rank 0: native: a caveat"});
}

TEST(ReportMergeTest, StepStragglersListFiveSteps) {
  std::vector<Report> inputs = {Input(1, 0, {}), Input(2, 1, {})};
  for (int i = 0; i < 7; ++i) {
    inputs[0].steps.push_back(Step(i, 10, 0));
    inputs[1].steps.push_back(Step(i, 30, 0));
  }
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.warnings.size(), 1u);
  const std::string& w = merged.warnings[0];
  EXPECT_EQ(w.rfind("rank 1 is a straggler in 7 of 7 steps (step 0: 30.0 ms against a median of "
                    "10.0 ms over 2 ranks; step 1: ",
                    0),
            0u)
      << w;
  EXPECT_NE(w.find("step 4: 30.0 ms against a median of 10.0 ms over 2 ranks; 2 more)"),
            std::string::npos)
      << w;
  EXPECT_EQ(w.find("step 5"), std::string::npos) << w;
}

TEST(ReportMergeTest, TheReportNamesItsInputsAndTheirPlaces) {
  std::vector<Report> inputs = TwoRanks();
  inputs[0].summary_path = "/tmp/rank0.json.summary.json";
  inputs[0].wall_ms = 50;
  inputs[1].wall_ms = 80;
  inputs[0].clock = {1'000'000'000, 500};
  inputs[1].clock = {1'000'000'600, -200};  // 1,000,000,400 on rank 0's clock: the earliest
  inputs[0].dropped_events = 3;
  inputs[1].dropped_events = 4;
  inputs[0].warnings = {"a warning"};
  inputs[1].warnings = {"another"};
  inputs[1].state = ProfilerState::kAll;
  inputs[0].places.push_back(PlaceSummary{"CPU", 1000, 0, 10, 0, {}, std::nullopt});
  inputs[1].places.push_back(PlaceSummary{"CPU", 2000, 0, 20, 0, {}, std::nullopt});
  inputs[1].places.push_back(PlaceSummary{"CPU", 30, 0, 0, 0, {}, 201});  // a child's
  inputs[1].processes.push_back({201, "worker", 0, 7, 1.5, "/tmp/w.summary.json"});
  inputs[0].cycle = 2;
  inputs[1].cycle = 2;
  const Report merged = MergeReports(inputs, EventSortingKey::kCalls);
  EXPECT_EQ(merged.sorted_by, EventSortingKey::kCalls);
  EXPECT_EQ(merged.events[0].name, "conv2d");
  EXPECT_DOUBLE_EQ(merged.wall_ms, 80);
  EXPECT_EQ(merged.clock.unix_ns, 1'000'000'400);
  EXPECT_EQ(merged.clock.offset_ns, 0);
  EXPECT_EQ(merged.dropped_events, 7);
  EXPECT_EQ(merged.state, ProfilerState::kCPU);
  EXPECT_EQ(merged.cycle, 2);
  EXPECT_FALSE(merged.oom.has_value());
  EXPECT_EQ(merged.process.role, "merged");
  EXPECT_EQ(merged.process.pid, 100);
  EXPECT_FALSE(merged.process.rank.has_value());
  EXPECT_EQ(merged.process.world_size, 2);
  ASSERT_EQ(merged.places.size(), 3u);
  EXPECT_EQ(merged.places[0].process, 100);
  EXPECT_EQ(merged.places[0].peak_bytes, 1000);
  EXPECT_EQ(merged.places[1].process, 200);
  EXPECT_EQ(merged.places[2].process, 201);
  ASSERT_EQ(merged.merged_from.size(), 2u);
  EXPECT_EQ(merged.merged_from[0].path, "/tmp/rank0.json.summary.json");
  EXPECT_EQ(merged.merged_from[1].path, "");
  EXPECT_EQ(merged.merged_from[1].process.pid, 200);
  EXPECT_EQ(merged.merged_from[1].process.rank, 1);
  EXPECT_EQ(merged.merged_from[0].label, "rank 0");
  EXPECT_DOUBLE_EQ(merged.merged_from[0].wall_ms, 50);
  EXPECT_DOUBLE_EQ(merged.merged_from[1].wall_ms, 80);
  EXPECT_EQ(merged.places[0].input, "rank 0");
  EXPECT_EQ(merged.places[2].input, "node1 pid 201");  // the child: no rank of its own
  // Each rank's own peak; the child's 30 bytes are another process's.
  EXPECT_EQ(merged.peaks_by.at("CPU"), (std::map<std::string, int64_t>{{"0", 1000}, {"1", 2000}}));
  ASSERT_EQ(merged.processes.size(), 1u);
  EXPECT_EQ(merged.processes[0].pid, 201);
  EXPECT_TRUE(HasWarning(merged, "rank 0: a warning"));
  EXPECT_TRUE(HasWarning(merged, "rank 1: another"));
  EXPECT_TRUE(HasWarning(merged,
                         "the inputs profiled different states (rank 1 All); the merged report's "
                         "state is the first input's, CPU."));
  EXPECT_NE(merged.Table().find("Merged from 2 profiles"), std::string::npos);
  // The summary of a merge reads back whole.
  const std::string json = merged.ToJson();
  EXPECT_EQ(internal::ReportFromJson(json, "merged").ToJson(), json);
}

// Each input's timelines under its places' labels, on the merged clock: rank 1's window
// opened 400 ns after rank 0's, as rank 0's clock reads (1,000,000,400 - 1,000,000,000).
// A rank's child has no rank: its place goes by host and pid.
TEST(ReportMergeTest, TimelinesAreKeyedByInputAndShiftedOntoTheMergedClock) {
  std::vector<Report> inputs = TwoRanks();
  inputs[0].clock = {1'000'000'000, 0};
  inputs[1].clock = {1'000'000'600, -200};
  inputs[0].places.push_back(PlaceSummary{"CPU", 1000, 0, 10, 0, {}, std::nullopt});
  inputs[0].timeline["CPU"] = {{0, 1.5, 3}, {0, 1000, 10}};
  inputs[1].places.push_back(PlaceSummary{"CUDA:0", 2000, 0, 20, 0, {}, std::nullopt});
  inputs[1].places.push_back(PlaceSummary{"CPU", 30, 0, 0, 0, {}, 201});  // a child's
  inputs[1].timeline["CUDA:0"] = {{0, 2}, {0, 2000}};
  inputs[1].timeline["CPU (pid 201)"] = {{0.25}, {30}};
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.timeline.size(), 3u);
  const TimelinePoints& cpu = merged.timeline.at("CPU (rank 0)");
  EXPECT_EQ(cpu.t_ms, (std::vector<double>{0, 1.5, 3}));
  EXPECT_EQ(cpu.bytes, (std::vector<int64_t>{0, 1000, 10}));
  const TimelinePoints& gpu = merged.timeline.at("CUDA:0 (rank 1)");
  EXPECT_EQ(gpu.t_ms, (std::vector<double>{0.0004, 2 + 0.0004}));
  EXPECT_EQ(gpu.bytes, (std::vector<int64_t>{0, 2000}));
  EXPECT_EQ(merged.timeline.at("CPU (node1 pid 201)").t_ms, std::vector<double>{0.25 + 0.0004});
  EXPECT_EQ(merged.places[2].process, 201);
  EXPECT_EQ(merged.merged_from[1].label, "rank 1");
  // Each key is a place's label in the table.
  for (const auto& [label, points] : merged.timeline) {
    EXPECT_NE(merged.Table().find("Memory on " + label + ": peak"), std::string::npos) << label;
  }
  const std::string json = merged.ToJson();
  EXPECT_EQ(internal::ReportFromJson(json, "merged").ToJson(), json);
}

TEST(ReportMergeTest, DifferentCyclesLeaveNone) {
  std::vector<Report> inputs = TwoRanks();
  inputs[0].cycle = 1;
  inputs[1].cycle = 2;
  EXPECT_FALSE(MergeReports(inputs, EventSortingKey::kTotal).cycle.has_value());
}

TEST(ReportMergeTest, GpuFiguresMergeAsTheCpusAndStayNullWhereNoneHasThem) {
  std::vector<Report> inputs = TwoRanks();
  EventRow& conv0 = inputs[0].events[0];
  conv0.gpu_total_ms = 3;
  conv0.gpu_min_ms = 1;
  conv0.gpu_max_ms = 2;
  conv0.gpu_ave_ms = 1.5;
  EventRow& conv1 = inputs[1].events[0];
  conv1.gpu_total_ms = 6;
  conv1.gpu_min_ms = 0.5;
  conv1.gpu_max_ms = 5;
  conv1.gpu_ave_ms = 2;
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  const EventRow& conv = Row(merged, "conv2d");
  EXPECT_DOUBLE_EQ(*conv.gpu_total_ms, 9);
  EXPECT_DOUBLE_EQ(*conv.gpu_min_ms, 0.5);
  EXPECT_DOUBLE_EQ(*conv.gpu_max_ms, 5);
  EXPECT_DOUBLE_EQ(*conv.gpu_ave_ms, 1.8);
  EXPECT_FALSE(Row(merged, "only_rank1").gpu_total_ms.has_value());
}

TEST(ReportMergeTest, AnEmptyListOrAFileGivenTwiceIsAnError) {
  EXPECT_THROW(MergeReports({}, EventSortingKey::kTotal), std::invalid_argument);
  std::vector<Report> inputs = TwoRanks();
  inputs.push_back(inputs[0]);
  inputs[0].summary_path = inputs[2].summary_path = "/tmp/a.summary.json";
  try {
    MergeReports(inputs, EventSortingKey::kTotal);
    ADD_FAILURE() << "one file merged twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "/tmp/a.summary.json is given twice (inputs 1 and 3): merge each profile once");
  }
}

// Two inputs that claim the same host and pid and no rank of their own (the same rank
// twice tells nothing apart) are kept apart, each under its own label, with a warning.
TEST(ReportMergeTest, TwoProfilesOfOneProcessStayApartWithAWarning) {
  std::vector<Report> inputs = TwoRanks();
  inputs.push_back(inputs[0]);
  inputs[0].summary_path = "/tmp/a.summary.json";
  inputs[0].places.push_back(PlaceSummary{"CPU", 1000, 0, 10, 0, {}, std::nullopt});
  inputs[2].places.push_back(PlaceSummary{"CPU", 3000, 0, 10, 0, {}, std::nullopt});
  inputs[0].steps = {Step(0, 5, 1000)};
  inputs[2].steps = {Step(0, 7, 3000)};
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  EXPECT_TRUE(HasWarning(merged,
                         "/tmp/a.summary.json and input 3 claim the same process (node1 pid 100) "
                         "and the same rank, 0: kept apart as node1 pid 100 and node1 pid 100 "
                         "(input 3); merge one profile per process, or give each rank its RANK"));
  ASSERT_EQ(merged.places.size(), 2u);
  EXPECT_EQ(merged.places[0].input, "node1 pid 100");
  EXPECT_EQ(merged.places[1].input, "node1 pid 100 (input 3)");
  EXPECT_EQ(merged.merged_from[2].label, "node1 pid 100 (input 3)");
  // Maps by input are keyed by label where pids repeat, by pid where one is alone.
  EXPECT_EQ(merged.steps[0].wall_ms_by, (std::map<std::string, double>{
                                            {"node1 pid 100", 5}, {"node1 pid 100 (input 3)", 7}}));
  EXPECT_EQ(merged.peaks_by.at("CPU"),
            (std::map<std::string, int64_t>{{"node1 pid 100", 1000},
                                            {"node1 pid 100 (input 3)", 3000}}));
  EXPECT_EQ(Row(merged, "conv2d").calls, 2 + 3 + 2);
  std::vector<Report> unnamed(2);  // summaries from before they named their process
  EXPECT_TRUE(HasWarning(MergeReports(unnamed, EventSortingKey::kTotal),
                         "input 1 and input 2 claim the same process (pid 0, a summary that does "
                         "not name its process) and no rank: kept apart as pid 0 and pid 0 "
                         "(input 2); merge one profile per process, or give each rank its RANK"));
}

// Two processes that claim one rank: every input goes by host and pid, and a warning says
// why.
TEST(ReportMergeTest, TwoProcessesOfOneRankAreNamed) {
  std::vector<Report> inputs = TwoRanks();
  inputs[1].process.rank = 0;
  inputs[1].summary_path = "/tmp/b.summary.json";
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  EXPECT_EQ(merged.merged_from[1].label, "node1 pid 200");
  EXPECT_TRUE(HasWarning(merged,
                         "input 1 and /tmp/b.summary.json both claim rank 0: the inputs go by "
                         "host and pid (node1 pid 100, node1 pid 200)"));
}

// A merge of merged reports: the inner inputs stay apart under the outer input's label,
// and each outer input's peak is the largest of its places.
TEST(ReportMergeTest, MergedReportsMergeAgainWithTheirInputsApart) {
  std::vector<Report> jobs;
  for (int job = 0; job < 2; ++job) {
    std::vector<Report> ranks = TwoRanks();
    for (int r = 0; r < 2; ++r) {
      ranks[r].process.host = "job" + std::to_string(job);
      ranks[r].places.push_back(PlaceSummary{"CPU", 1000 * (job + 1) + r, 0, 0, 0, {}, {}});
      ranks[r].timeline["CPU"] = {{0}, {1000 * (job + 1) + r}};
    }
    jobs.push_back(MergeReports(ranks, EventSortingKey::kTotal));
  }
  const Report merged = MergeReports(jobs, EventSortingKey::kTotal);
  ASSERT_EQ(merged.timeline.size(), 4u);
  EXPECT_EQ(merged.timeline.at("CPU (job1 pid 100 / rank 1)").bytes,
            std::vector<int64_t>{2001});
  EXPECT_EQ(merged.peaks_by.at("CPU"),
            (std::map<std::string, int64_t>{{"job0 pid 100", 1001}, {"job1 pid 100", 2001}}));
}

// Ranks on two machines whose processes are both pid 1 (each the first of its container):
// by rank where they have ranks, by host and pid where they have none.
TEST(ReportMergeTest, TwoHostsWithOnePidStayApart) {
  std::vector<Report> inputs = TwoRanks();
  for (size_t i = 0; i < 2; ++i) {
    inputs[i].process.pid = 1;
    inputs[i].process.host = "node" + std::to_string(i + 1);
    inputs[i].places.push_back(PlaceSummary{"CPU", 1000 * (int64_t(i) + 1), 0, 0, 0, {}, {}});
    inputs[i].timeline["CPU"] = {{0}, {1000 * (int64_t(i) + 1)}};
    inputs[i].steps = {Step(0, 5.0 + i, 0)};
  }
  const Report by_rank = MergeReports(inputs, EventSortingKey::kTotal);
  EXPECT_TRUE(HasWarning(by_rank,
                         "rank 1 is a straggler in conv2d: 9.0 ms there against a median of "
                         "4.0 ms over 2 ranks"));
  EXPECT_EQ(by_rank.timeline.at("CPU (rank 0)").bytes, std::vector<int64_t>{1000});
  EXPECT_EQ(by_rank.timeline.at("CPU (rank 1)").bytes, std::vector<int64_t>{2000});
  EXPECT_EQ(by_rank.steps[0].wall_ms_by,
            (std::map<std::string, double>{{"0", 5}, {"1", 6}}));

  for (Report& input : inputs) input.process.rank.reset();
  const Report by_host = MergeReports(inputs, EventSortingKey::kTotal);
  EXPECT_TRUE(HasWarning(by_host,
                         "node2 pid 1 is a straggler in conv2d: 9.0 ms there against a median of "
                         "4.0 ms over 2 processes"));
  EXPECT_EQ(by_host.timeline.at("CPU (node1 pid 1)").bytes, std::vector<int64_t>{1000});
  EXPECT_EQ(by_host.timeline.at("CPU (node2 pid 1)").bytes, std::vector<int64_t>{2000});
  EXPECT_EQ(by_host.merged_from[0].label, "node1 pid 1");
  EXPECT_EQ(by_host.merged_from[1].label, "node2 pid 1");
  EXPECT_EQ(by_host.merged_from[1].key, "node2 pid 1");
  EXPECT_EQ(by_rank.merged_from[1].key, "1");
  EXPECT_EQ(by_host.steps[0].wall_ms_by,
            (std::map<std::string, double>{{"node1 pid 1", 5}, {"node2 pid 1", 6}}));
  EXPECT_EQ(Row(by_host, "conv2d").spread->by, "process");
  EXPECT_EQ(Row(by_host, "conv2d").spread->argmax, 1);
  EXPECT_NE(by_host.Table().find("Memory on CPU (node2 pid 1): peak"), std::string::npos);
  const std::string json = by_host.ToJson();
  EXPECT_EQ(internal::ReportFromJson(json, "merged").ToJson(), json);
}

// Each input's peak per place kind; a rank over 10% and at least 64 MiB above the median
// (the lower middle) is named.
TEST(ReportMergeTest, AMemoryStragglerIsNamedWithItsPeakAndTheMedian) {
  constexpr int64_t kMiB = 1 << 20;
  const int64_t peaks[] = {480 * kMiB + kMiB / 2, 470 * kMiB, 490 * kMiB, 612 * kMiB};
  std::vector<Report> inputs;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(Input(100 + i, i, {TimedRow("op", 1, 1, 1, 1, 1)}));
    // Each rank its own device, as under torchrun: one kind of place.
    inputs.back().places.push_back(
        PlaceSummary{"CUDA:" + std::to_string(i), peaks[i], 0, 0, 0, {}, {}});
    inputs.back().places.push_back(PlaceSummary{"CPU", 10 * kMiB, 0, 0, 0, {}, {}});
  }
  // A child's place (a DataLoader worker) is another process's memory, not the rank's.
  inputs[0].places.push_back(PlaceSummary{"CPU", 900 * kMiB, 0, 0, 0, {}, 555});
  const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
  EXPECT_EQ(merged.peaks_by.at("CUDA"),
            (std::map<std::string, int64_t>{{"0", peaks[0]}, {"1", peaks[1]}, {"2", peaks[2]},
                                            {"3", peaks[3]}}));
  EXPECT_EQ(merged.peaks_by.at("CPU").at("0"), 10 * kMiB);
  std::vector<std::string> memory;
  for (const std::string& w : merged.warnings) {
    if (w.find("memory straggler") != std::string::npos) memory.push_back(w);
  }
  EXPECT_EQ(memory, std::vector<std::string>{
                        "rank 3 is a memory straggler on CUDA: peak 612.0 MiB against a median "
                        "of 480.5 MiB over 4 ranks"});
  const std::string json = merged.ToJson();
  EXPECT_NE(json.find(R"("peaks_by":{"CPU":{"0":10485760,)"), std::string::npos);
  EXPECT_EQ(internal::ReportFromJson(json, "merged").ToJson(), json);
}

// Both thresholds hold: 10% alone (a small rank) or 64 MiB alone (a large model) is not
// enough. Two ranks: the median is the smaller.
TEST(ReportMergeTest, AMemoryStragglerNeedsBothThresholds) {
  constexpr int64_t kMiB = 1 << 20;
  const auto warned = [](int64_t a, int64_t b) {
    std::vector<Report> inputs = TwoRanks();
    inputs[0].places.push_back(PlaceSummary{"CPU", a, 0, 0, 0, {}, {}});
    inputs[1].places.push_back(PlaceSummary{"CPU", b, 0, 0, 0, {}, {}});
    const Report merged = MergeReports(inputs, EventSortingKey::kTotal);
    return std::count_if(merged.warnings.begin(), merged.warnings.end(), [](const std::string& w) {
      return w.find("is a memory straggler") != std::string::npos;
    });
  };
  EXPECT_EQ(warned(100 * kMiB, 200 * kMiB), 1);     // 100% and 100 MiB over
  EXPECT_EQ(warned(100 * kMiB, 164 * kMiB), 1);     // 64 MiB exactly
  EXPECT_EQ(warned(100 * kMiB, 164 * kMiB - 1), 0);  // a byte short of 64 MiB
  EXPECT_EQ(warned(1000 * kMiB, 1100 * kMiB), 0);   // 10% exactly: not over it
  EXPECT_EQ(warned(1000 * kMiB, 1101 * kMiB), 1);
  EXPECT_EQ(warned(kMiB, 60 * kMiB), 0);             // 60 times, but 59 MiB
  EXPECT_EQ(warned(200 * kMiB, 100 * kMiB), 1);     // rank 0 this time
}

// Figures that add up past what an int64_t holds, over the inputs or children: only a
// summary no profiler wrote has them. Each is named, none silently wraps.
TEST(ReportMergeTest, FiguresThatWouldOverflowTheirSumsAreNamed) {
  std::vector<Report> inputs = TwoRanks();
  inputs[1].summary_path = "/tmp/b.summary.json";
  inputs[1].events[0].calls = INT64_MAX - 4;
  try {
    MergeReports(inputs, EventSortingKey::kTotal);
    ADD_FAILURE() << "calls past INT64_MAX merged";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "/tmp/b.summary.json: its calls, bytes and counts, with those of the inputs before "
              "it, add up past 2^63: too large to merge");
  }
  inputs[1].events[0].calls = 3;
  inputs[1].events[0].memory["CPU"].free_bytes = INT64_MIN;  // magnitudes count
  EXPECT_THROW(MergeReports(inputs, EventSortingKey::kTotal), std::invalid_argument);
}

Report Child(int64_t pid) {
  EventRow a = TimedRow("a", 1, 2, 2, 2, 2);
  a.memory["CPU"] = Memory(64, 64, 1, 0, 0, 64);
  Report child = Input(pid, std::nullopt, {a, TimedRow("b", 4, 4, 4, 1, 1)});
  child.process.role = "worker";
  child.process.worker_id = 3;
  child.process.parent_pid = 100;
  child.wall_ms = 12.5;
  child.summary_path = "/tmp/kids/" + std::to_string(pid) + ".json.summary.json";
  child.warnings = {"a child's warning"};
  child.places.push_back(PlaceSummary{"CPU", 64, 0, 64, 0, {}, std::nullopt});
  child.steps = {Step(0, 99, 0)};
  return child;
}

Report Parent() {
  Report parent = Input(100, std::nullopt, {TimedRow("a", 2, 6, 5, 2, 4)});
  parent.wall_ms = 40;
  parent.places.push_back(PlaceSummary{"CPU", 10, 0, 0, 0, {}, std::nullopt});
  parent.steps = {Step(0, 30, 0)};
  parent.clock = {123, 4};
  return parent;
}

TEST(ReportMergeTest, ChildrenMergeIntoTheParentAsThreadsDo) {
  Report parent = Parent();
  MergeChildren(&parent, {Child(200)}, /*per_process=*/false);
  ASSERT_EQ(parent.events.size(), 2u);
  const EventRow& a = Row(parent, "a");
  EXPECT_EQ(a.calls, 3);
  EXPECT_DOUBLE_EQ(a.total_ms, 8);
  EXPECT_DOUBLE_EQ(a.ave_ms, 8.0 / 3);
  EXPECT_DOUBLE_EQ(a.ratio, 7.0 / 11);
  EXPECT_FALSE(a.process.has_value());
  EXPECT_FALSE(a.spread.has_value());
  EXPECT_EQ(testing::Cpu(a).live_bytes, 64);
  ASSERT_EQ(parent.processes.size(), 1u);
  const ChildProcess& child = parent.processes[0];
  EXPECT_EQ(child.pid, 200);
  EXPECT_EQ(child.role, "worker");
  EXPECT_EQ(child.worker_id, 3);
  EXPECT_EQ(child.calls, 5);
  EXPECT_DOUBLE_EQ(child.wall_ms, 12.5);
  EXPECT_EQ(child.summary_path, "/tmp/kids/200.json.summary.json");
  ASSERT_EQ(parent.places.size(), 2u);
  EXPECT_EQ(parent.places[0].process, 100);
  EXPECT_EQ(parent.places[1].process, 200);
  EXPECT_TRUE(HasWarning(parent, "pid 200: a child's warning"));
  // What stays the parent's.
  ASSERT_EQ(parent.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(parent.steps[0].wall_ms, 30);
  EXPECT_DOUBLE_EQ(parent.wall_ms, 40);
  EXPECT_EQ(parent.process.pid, 100);
  EXPECT_EQ(parent.clock.unix_ns, 123);
  EXPECT_NE(parent.Table().find("Processes: 2"), std::string::npos);
}

// The children's windows opened 250 and 1,000,000 ns after the parent's.
TEST(ReportMergeTest, ChildTimelinesAreKeyedByPidOnTheParentsClock) {
  Report parent = Parent();
  parent.timeline["CPU"] = {{0, 7.5}, {0, 10}};
  Report early = Child(200);
  early.clock = {123 + 250, 0};
  early.timeline["CPU"] = {{0, 0.5}, {0, 64}};
  Report late = Child(300);
  late.clock = {123 + 1'000'000, 0};
  late.timeline["CPU"] = {{0}, {64}};
  MergeChildren(&parent, {early, late}, /*per_process=*/false);
  ASSERT_EQ(parent.timeline.size(), 3u);
  EXPECT_EQ(parent.timeline.at("CPU (pid 100)").t_ms, (std::vector<double>{0, 7.5}));
  EXPECT_EQ(parent.timeline.at("CPU (pid 100)").bytes, (std::vector<int64_t>{0, 10}));
  EXPECT_EQ(parent.timeline.at("CPU (pid 200)").t_ms,
            (std::vector<double>{0.00025, 0.5 + 0.00025}));
  EXPECT_EQ(parent.timeline.at("CPU (pid 200)").bytes, (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(parent.timeline.at("CPU (pid 300)").t_ms, std::vector<double>{1});

  Report alone = Parent();  // no child: the parent's keys stay its places' names
  alone.timeline["CPU"] = {{0}, {10}};
  MergeChildren(&alone, {}, /*per_process=*/true);
  EXPECT_EQ(alone.timeline.begin()->first, "CPU");
  EXPECT_EQ(alone.timeline.size(), 1u);
}

TEST(ReportMergeTest, PerProcessRowsAreLabelledByPid) {
  Report parent = Parent();
  MergeChildren(&parent, {Child(200), Child(300)}, /*per_process=*/true);
  ASSERT_EQ(parent.events.size(), 5u);
  EXPECT_EQ(parent.events[0].name, "a");  // the parent's 6 ms first
  EXPECT_EQ(parent.events[0].process, 100);
  EXPECT_EQ(parent.events[0].calls, 2);
  const std::string table = parent.Table();
  for (const char* label : {"pid100::a ", "pid200::a ", "pid300::b "}) {
    EXPECT_NE(table.find(label), std::string::npos) << label << "\n" << table;
  }
  EXPECT_EQ(parent.processes.size(), 2u);
  EXPECT_EQ(parent.places.size(), 3u);
}

TEST(ReportMergeTest, WithoutChildrenOnlyPerProcessChangesTheRows) {
  Report alone = Parent();
  MergeChildren(&alone, {}, /*per_process=*/false);
  EXPECT_FALSE(alone.events[0].process.has_value());
  EXPECT_DOUBLE_EQ(alone.events[0].ratio, 1);  // recomputed: the only row
  EXPECT_FALSE(alone.places[0].process.has_value());
  EXPECT_TRUE(alone.processes.empty());
  MergeChildren(&alone, {}, /*per_process=*/true);
  EXPECT_EQ(alone.events[0].process, 100);
  EXPECT_FALSE(alone.places[0].process.has_value());
}

TEST(ReportMergeTest, AChildWhoseFiguresWouldOverflowTheSumsIsLeftOutAndNamed) {
  Report parent = Parent();
  Report huge = Child(300);
  huge.events[1].calls = INT64_MAX;
  MergeChildren(&parent, {Child(200), huge}, false);
  ASSERT_EQ(parent.processes.size(), 1u);
  EXPECT_EQ(parent.processes[0].pid, 200);
  EXPECT_EQ(Row(parent, "b").calls, 4);
  EXPECT_TRUE(HasWarning(parent,
                         "pid 300: its profile /tmp/kids/300.json.summary.json was left "
                         "out: its calls, bytes and counts add up past 2^63"))
      << parent.Table();
}

}  // namespace
}  // namespace paddle_prof
