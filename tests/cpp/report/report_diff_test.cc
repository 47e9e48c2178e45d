// Two runs compared (report_diff.h) and the diff's outputs (diff_outputs.h): statuses by
// the median against the base's spread, by the average without call durations, not
// judged under kSpreadCalls calls; memory to the byte; rows folded where only one run is
// split; processes named as the other run would know them.
#include "report_diff.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "call_durations.h"
#include "diff_outputs.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::DiffReports;
using internal::DiffRow;
using internal::ReportDiff;
using testing::Memory;
using testing::TimedRow;

// `calls` calls of each duration in `ms`, with the percentiles they give.
EventRow Timed(const std::string& name, int64_t calls_each, std::vector<int64_t> ms) {
  int64_t calls = 0;
  double total = 0;
  EventRow row =
      TimedRow(name, 0, 0, 0, static_cast<double>(ms.front()), static_cast<double>(ms.back()));
  for (const int64_t m : ms) {
    row.durations.ns.push_back(m * 1000000);
    row.durations.calls.push_back(calls_each);
    calls += calls_each;
    total += static_cast<double>(m * calls_each);
  }
  row.calls = calls;
  row.total_ms = row.self_ms = total;
  internal::SetPercentiles(internal::PercentilesMs(row.durations), &row);
  return row;
}

Report Profile(std::vector<EventRow> rows, int64_t cpu_peak = 1000) {
  Report r;
  r.process.pid = 100;
  r.events = std::move(rows);
  PlaceSummary cpu;
  cpu.place = "CPU";
  cpu.peak_bytes = cpu_peak;
  r.places.push_back(cpu);
  return r;
}

const DiffRow& RowNamed(const ReportDiff& d, const std::string& name) {
  for (const DiffRow& row : d.rows) {
    if (row.name == name) return row;
  }
  throw std::runtime_error("no row " + name);
}

std::vector<std::string> Status(const ReportDiff& d, const std::string& name) {
  return RowNamed(d, name).status;
}

using Statuses = std::vector<std::string>;

TEST(ReportDiffTest, ARunAgainstItselfHasNoChange) {
  const Report run = Profile({Timed("op", 10, {1, 2, 3}), TimedRow("[no event]", 0, 0, 0, 0, 0)});
  const ReportDiff d = DiffReports(run, run, 0.1, 0);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(Status(d, "op"), Statuses{"same"});
  EXPECT_EQ(RowNamed(d, "op").time_by, "median");
  EXPECT_EQ(Status(d, "[no event]"), Statuses{"same"});
  EXPECT_FALSE(RowNamed(d, "[no event]").time_by.has_value());
  EXPECT_TRUE(d.changed.empty());
  EXPECT_TRUE(d.regressing_rows.empty() && d.regressing_places.empty());
  EXPECT_EQ(internal::DiffTable(d),
            "Compared with thresholds: time 10%, memory 0%\n"
            "No changes: every row and place is the same within the thresholds.\n");
}

TEST(ReportDiffTest, AMedianPastTheThresholdAndTheSpreadIsSlowerAndNoiseIsNot) {
  const Report base = Profile({Timed("op", 10, {1, 2, 3})});  // p10 1, p50 2, p90 3 ms
  const ReportDiff slower = DiffReports(base, Profile({Timed("op", 10, {3, 4, 5})}), 0.1, 0);
  EXPECT_EQ(Status(slower, "op"), Statuses{"slower"});
  EXPECT_EQ(slower.regressing_rows, std::vector<size_t>{0});
  EXPECT_EQ(Status(DiffReports(Profile({Timed("op", 10, {3, 4, 5})}), base, 0.1, 0), "op"),
            Statuses{"faster"});
  // A median 50% up but inside the base's P90: noise, not a change.
  EXPECT_EQ(Status(DiffReports(base, Profile({Timed("op", 10, {2, 3, 3})}), 0.1, 0), "op"),
            Statuses{"same"});
}

TEST(ReportDiffTest, UnderTenCallsOnASideTimeIsNotJudgedAndMemoryIs) {
  EventRow few = Timed("op", 3, {10, 20, 30});  // 9 calls, ten times slower
  few.memory["CPU"] = Memory(8, 8, 1, 0, 0, 8);
  const ReportDiff d = DiffReports(Profile({Timed("op", 10, {1, 2, 3})}), Profile({few}), 0.1, 0);
  EXPECT_EQ(Status(d, "op"), Statuses{"more_memory"});
  EXPECT_EQ(RowNamed(d, "op").time_by, "few_calls");
  EXPECT_NE(internal::DiffTable(d).find("Time not judged for 1 of 1 rows: fewer than 10 calls"),
            std::string::npos);
}

TEST(ReportDiffTest, WithoutCallDurationsTheAverageCallIsJudged) {
  EventRow old = TimedRow("op", 10, 20, 20, 1, 3);  // no durations: a summary from before them
  EventRow slow = TimedRow("op", 10, 200, 200, 10, 30);
  const ReportDiff d = DiffReports(Profile({old}), Profile({slow}), 0.1, 0);
  EXPECT_EQ(Status(d, "op"), Statuses{"slower"});
  EXPECT_EQ(RowNamed(d, "op").time_by, "average");
  EXPECT_FALSE(RowNamed(d, "op").base->p50_ms.has_value());
  const std::string table = internal::DiffTable(d);
  EXPECT_NE(table.find("avg 2 -> 20"), std::string::npos) << table;
  EXPECT_NE(table.find("Time judged by the average call for 1 of 1 rows"), std::string::npos);
}

TEST(ReportDiffTest, MemoryIsJudgedToTheByteAndByTheThreshold) {
  EventRow base = Timed("op", 10, {1});
  base.memory["CPU"] = Memory(4000, 4000, 1, 0, 0, 4000);
  EventRow more = base;
  more.memory["CPU"].peak_bytes += 4;
  const ReportDiff d = DiffReports(Profile({base}, 8000), Profile({more}, 8008), 0.1, 0);
  EXPECT_EQ(Status(d, "op"), Statuses{"more_memory"});
  ASSERT_EQ(d.places.size(), 1u);
  EXPECT_EQ(d.places[0].status, "more_memory");
  EXPECT_EQ(d.regressing_places, std::vector<size_t>{0});
  const std::string table = internal::DiffTable(d);
  EXPECT_NE(table.find("3.91 KiB -> 3.91 KiB (+4 B)"), std::string::npos) << table;
  EXPECT_NE(table.find("Peak on CPU: 7.81 KiB -> 7.82 KiB (+8 B) (more_memory)\nRegressions: 2\n"),
            std::string::npos)
      << table;
  const ReportDiff tolerant = DiffReports(Profile({base}, 8000), Profile({more}, 8008), 0.1, 0.01);
  EXPECT_EQ(Status(tolerant, "op"), Statuses{"same"});
  EXPECT_EQ(tolerant.places[0].status, "same");
  EXPECT_EQ(Status(DiffReports(Profile({more}), Profile({base}), 0.1, 0), "op"),
            Statuses{"less_memory"});
}

TEST(ReportDiffTest, NewAndGoneRowsComeFirstLargestTimeChangeFirst) {
  EventRow grown = Timed("grown", 10, {1});
  grown.memory["CPU"] = Memory(10, 10, 1, 0, 0, 10);
  EventRow grown_more = grown;
  grown_more.memory["CPU"].peak_bytes = 20;
  const ReportDiff d = DiffReports(
      Profile({Timed("gone", 10, {1}), grown}),
      Profile({grown_more, Timed("small_new", 1, {1}), Timed("big_new", 10, {9})}), 0.1, 0);
  ASSERT_EQ(d.rows.size(), 4u);  // the base's keys, then the new run's
  EXPECT_EQ(d.rows[0].name, "gone");
  EXPECT_EQ(d.rows[2].name, "small_new");
  std::vector<std::string> changed;
  for (const size_t i : d.changed) changed.push_back(d.rows[i].name);
  EXPECT_EQ(changed, (std::vector<std::string>{"big_new", "gone", "small_new", "grown"}));
}

TEST(ReportDiffTest, RowsOfThreadsFoldWhereTheOtherRunIsNotSplit) {
  EventRow t1 = Timed("op", 5, {1}), t2 = Timed("op", 5, {3});
  t1.thread = 1;
  t2.thread = 2;
  t1.memory["CPU"] = Memory(100, 100, 1, 0, 0, 10);
  t2.memory["CPU"] = Memory(300, 300, 1, 0, 0, 20);
  EventRow whole = Timed("op", 5, {1, 3});
  whole.memory["CPU"] = Memory(300, 400, 2, 0, 0, 30);
  const ReportDiff d = DiffReports(Profile({t1, t2}), Profile({whole}), 0.1, 0);
  ASSERT_EQ(d.rows.size(), 1u);
  const DiffRow& row = d.rows[0];
  EXPECT_FALSE(row.thread.has_value());
  EXPECT_EQ(row.status, Statuses{"same"});
  EXPECT_EQ(row.base->calls, 10);
  EXPECT_DOUBLE_EQ(row.base->total_ms, 20);
  EXPECT_EQ(row.base->memory.at("CPU").peak_bytes, 300);  // the largest
  EXPECT_EQ(row.base->memory.at("CPU").live_bytes, 30);   // the sum
  // Both split: rows match thread by thread.
  const ReportDiff by_thread = DiffReports(Profile({t1, t2}), Profile({t2, t1}), 0.1, 0);
  ASSERT_EQ(by_thread.rows.size(), 2u);
  EXPECT_EQ(by_thread.rows[0].thread, 1);
}

TEST(ReportDiffTest, ProcessesGoByRankElseByTheirPlaceAmongTheInputsOrChildren) {
  EventRow main_row = Timed("op", 10, {1}), child_row = main_row, worker_row = main_row;
  main_row.process = 100;
  child_row.process = 300;
  worker_row.process = 400;
  Report base = Profile({main_row, child_row, worker_row});
  base.processes = {{300, "child"}, {400, "worker", 2}};
  Report next = base;
  for (EventRow& row : next.events) row.process = *row.process + 1000;  // other pids
  next.process.pid += 1000;
  next.processes = {{1300, "child"}, {1400, "worker", 2}};
  const ReportDiff d = DiffReports(base, next, 0.1, 0);
  std::vector<std::string> processes;
  for (const DiffRow& row : d.rows)
    processes.push_back(row.process.value_or("-") + ":" + row.status[0]);
  EXPECT_EQ(processes,
            (std::vector<std::string>{"main process:same", "child 0:same", "worker 2:same"}));
  Report ranked = base;
  ranked.process.rank = 3;
  EXPECT_EQ(*DiffReports(ranked, ranked, 0.1, 0).rows[0].process, "rank 3");
}

TEST(ReportDiffTest, ItsJsonIsTheShapeThePackageHandsOut) {
  EventRow base = Timed("op", 10, {1, 2, 3});
  base.tag = "[[2, 3]]";
  EventRow slow = Timed("op", 10, {3, 4, 5});
  slow.tag = base.tag;
  const auto j = nlohmann::json::parse(
      internal::DiffJson(DiffReports(Profile({base}), Profile({slow}, 2000), 0.1, 0)));
  EXPECT_DOUBLE_EQ(j["time_threshold"].get<double>(), 0.1);
  const auto& row = j["rows"][0];
  EXPECT_EQ(row["name"], "op");
  EXPECT_EQ(row["tag"], "[[2, 3]]");
  EXPECT_EQ(row["status"], nlohmann::json({"slower"}));
  EXPECT_EQ(row["time_by"], "median");
  EXPECT_EQ(row["base"]["calls"], 30);
  EXPECT_DOUBLE_EQ(row["new"]["p50_ms"].get<double>(), 4);
  EXPECT_FALSE(row.contains("thread") || row.contains("process"));
  EXPECT_EQ(j["places"][0], nlohmann::json({{"place", "CPU"},
                                            {"base_peak_bytes", 1000},
                                            {"new_peak_bytes", 2000},
                                            {"status", "more_memory"}}));
  ASSERT_EQ(j["regressions"].size(), 2u);  // the row, then the place
  EXPECT_EQ(j["regressions"][0], row);
  EXPECT_EQ(j["regressions"][1], j["places"][0]);
  EXPECT_EQ(j["changed"], nlohmann::json({0}));
}

TEST(ReportDiffTest, MergedInputsGoByRankElseByTheirPlaceAndSoDoTheirPlaces) {
  auto merged = [](std::optional<int> rank0, std::optional<int> rank1) {
    EventRow a = Timed("op", 10, {1}), b = a;
    a.process = 11;
    b.process = 22;
    Report r = Profile({a, b});
    r.places.clear();
    for (const auto& [pid, rank] : {std::pair{int64_t{11}, rank0}, std::pair{int64_t{22}, rank1}}) {
      MergedInput input;
      input.process.pid = pid;
      input.process.rank = rank;
      input.label = "node1 pid " + std::to_string(pid);
      r.merged_from.push_back(input);
      PlaceSummary place;
      place.place = "CPU";
      place.process = pid;
      place.input = input.label;
      place.peak_bytes = 1000 * pid;
      r.places.push_back(place);
    }
    return r;
  };
  const ReportDiff ranked = DiffReports(merged(0, 1), merged(0, 1), 0.1, 0);
  ASSERT_EQ(ranked.rows.size(), 2u);
  EXPECT_EQ(*ranked.rows[1].process, "rank 1");
  ASSERT_EQ(ranked.places.size(), 2u);
  EXPECT_EQ(ranked.places[1].place, "CPU (rank 1)");
  const ReportDiff unranked = DiffReports(merged({}, {}), merged({}, {}), 0.1, 0);
  EXPECT_EQ(*unranked.rows[1].process, "input 2");
  EXPECT_EQ(unranked.places[0].place, "CPU (input 1)");
  EXPECT_EQ(unranked.places[1].next_peak_bytes, 22000);
  // Split that way, every row has the key: null on a row of no process.
  Report with_unsplit = merged(0, 1);
  with_unsplit.events.push_back(Timed("unsplit", 10, {1}));
  const auto j =
      nlohmann::json::parse(internal::DiffJson(DiffReports(with_unsplit, with_unsplit, 0.1, 0)));
  EXPECT_EQ(j["rows"][0]["process"], "rank 0");
  ASSERT_TRUE(j["rows"][2].contains("process"));
  EXPECT_TRUE(j["rows"][2]["process"].is_null());
  EXPECT_FALSE(j["rows"][2].contains("thread"));
}

TEST(ReportDiffTest, SizesReadAsTheTablesAndFiguresPastInt64DoNotOverflow) {
  EventRow base = Timed("op", 10, {1});
  base.memory["CPU"] = Memory(1048575, 0, 0, 0, 0, 0);  // 1023.999 KiB: rounds to 1.00 MiB
  EventRow huge = base;
  huge.memory["CPU"].peak_bytes = INT64_MAX;
  huge.memory["GPU"] = Memory(INT64_MAX, 0, 0, 0, 0, 0);
  const ReportDiff d = DiffReports(Profile({base}), Profile({huge}), 0.1, 0);
  EXPECT_EQ(Status(d, "op"), Statuses{"more_memory"});
  EXPECT_EQ(internal::SideBytes(d.rows[0].next, true), INT64_MAX);  // held, not wrapped
  const std::string table = internal::DiffTable(d);
  EXPECT_NE(table.find("1.00 MiB -> 8388608.00 TiB (+9223372036853727232 B)"), std::string::npos)
      << table;
}

TEST(ReportDiffTest, ThePageHoldsTheDiffAndBothRunsWhereNoNameCanEndItsScript) {
  EventRow base = Timed("</script><b>", 10, {1});
  Report before = Profile({base});
  before.timeline["CPU"].t_ms = {0, 1};
  before.timeline["CPU"].bytes = {0, 64};
  const std::string page =
      internal::DiffPage(DiffReports(before, Profile({base}), 0.1, 0), before, Profile({base}));
  EXPECT_EQ(page.find("@PADDLE_PROF_DIFF@"), std::string::npos);
  EXPECT_EQ(page.find("/*@include"), std::string::npos);
  EXPECT_NE(page.find("function formatBytes("), std::string::npos);  // number_format.js
  EXPECT_EQ(page.find("</script><b>"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script>\\u003cb>"), std::string::npos);
  EXPECT_NE(page.find(R"("base":{"timeline":{"CPU":{"t_ms":[0,1],"bytes":[0,64]}})"),
            std::string::npos);
}

}  // namespace
}  // namespace paddle_prof
