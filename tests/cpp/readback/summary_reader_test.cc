// Summaries read back (summary_reader.h): every field the writer writes comes back, and
// what is not a version-1 summary is an error that names its source.
#include "summary_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "paddle_prof/paddle_prof.h"
#include "process_identity.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using internal::LoadSummary;
using internal::ReportFromJson;

Report Profiled() {
  EnableProfiler(ProfilerState::kCPU);
  TrackingAllocator allocator(CPUAllocator(), CPUPlace());
  for (int step = 0; step < 2; ++step) {
    RecordEvent outer("outer");
    {
      RecordEvent inner("inner", "[8]");
      allocator.Free(allocator.Allocate(4096));
    }
    MarkStep();
  }
  return StopProfiler();
}

TEST(SummaryReaderTest, AWindowsSummaryReadsBackToTheSameJson) {
  const Report report = Profiled();
  const std::string json = report.ToJson();
  const Report read = ReportFromJson(json, "test");
  EXPECT_EQ(read.ToJson(), json);
  EXPECT_EQ(testing::Row(read, "inner", "[8]").calls, 2);
  EXPECT_EQ(testing::Cpu(testing::Row(read, "inner", "[8]")).peak_bytes, 4096);
  EXPECT_EQ(read.steps.size(), 2u);
  // Two allocations and two frees after the start.
  ASSERT_EQ(read.timeline.size(), read.places.size());
  EXPECT_EQ(read.timeline.at("CPU").bytes.size(), 5u);
  EXPECT_EQ(read.timeline.at("CPU").t_ms, report.timeline.at("CPU").t_ms);
}

TEST(SummaryReaderTest, TimelinePointsReadBackExactlyAndOlderSummariesHaveNone) {
  Report report;
  report.timeline["CPU"] = {{0, 0.1, 2.5e-7, 1234.5678901234567, 1e300}, {0, 4096, -1, 1, 0}};
  report.timeline["CUDA:0 (pid 42)"] = {{0}, {9007199254740993}};
  const std::string json = report.ToJson();
  const std::string written =
      R"js("timeline":{"CPU":{"t_ms":[0,0.1,2.5e-07,1234.5678901234567,1e+300],)js"
      R"js("bytes":[0,4096,-1,1,0]},"CUDA:0 (pid 42)":{"t_ms":[0],"bytes":[9007199254740993]}})js";
  EXPECT_NE(json.find(written), std::string::npos) << json;
  const Report read = ReportFromJson(json, "test");
  EXPECT_EQ(read.ToJson(), json);
  EXPECT_EQ(read.timeline.at("CPU").t_ms[3], 1234.5678901234567);
  EXPECT_EQ(read.timeline.at("CUDA:0 (pid 42)").bytes[0], 9007199254740993);

  EXPECT_NE(Report().ToJson().find(R"("timeline":{})"), std::string::npos);
  nlohmann::json older = nlohmann::json::parse(json);
  older.erase("timeline");
  EXPECT_TRUE(ReportFromJson(older.dump(), "older").timeline.empty());
}

TEST(SummaryReaderTest, MergedAndChildFieldsReadBack) {
  Report report = Profiled();
  report.events[0].process = 42;
  report.events[0].spread = RowSpread{"rank", 1.5, 2.25, 7.125, 1};
  report.places[0].process = 42;
  report.timeline = {{"CPU (pid 42)", report.timeline.at("CPU")}};
  report.steps[0].wall_ms_by = {{"0", 1.5}, {"1", 3.25}};
  report.steps[0].slowest = 1;
  report.process.rank = 1;
  report.process.world_size = 2;
  report.process.parent_pid = 7;
  report.process.role = "worker";
  report.process.worker_id = 3;
  report.clock = {1700000000123456789, -1234};
  report.processes.push_back({43, "worker", 0, 12, 3.5, "/tmp/x/43.json.summary.json"});
  report.merged_from.push_back({"/tmp/a.json.summary.json", report.process});
  report.cycle = 2;
  report.oom = OutOfMemory{"CPU", 1 << 20, "inner", {"outer", "inner"}, 4096};
  // Where memory comes from: paths, sources, native frames.
  const RowBytes holder{"conv",
                        "[1, 2]",
                        2048,
                        {"forward", "conv"},
                        "train.py:3 in f",
                        {"at::native::conv (libtorch_cpu.so)", "libdnnl.so.2+0x10"}};
  report.oom->holders = {holder};
  report.places[0].at_peak.push_back(holder);
  report.events[0].sources = {{"train.py:3 in f", 5}, {"eval.py:9 in g", 2}};
  report.advice = {{"small_ops", "m", "f", std::nullopt, 2.5}, {"data_bound", "d", "g", 7, std::nullopt}};
  report.notes = {"native: peak_bytes is the highest ..."};
  const std::string json = report.ToJson();
  const Report read = ReportFromJson(json, "test");
  ASSERT_EQ(read.advice.size(), 2u);
  EXPECT_EQ(read.advice[0].ms, 2.5);
  EXPECT_FALSE(read.advice[0].bytes);
  EXPECT_EQ(read.advice[1].bytes, 7);
  EXPECT_EQ(read.notes, report.notes);
  EXPECT_EQ(read.ToJson(), json);
  EXPECT_EQ(read.oom->holders.at(0).native_stack.size(), 2u);
  EXPECT_EQ(read.places[0].at_peak.back().source, "train.py:3 in f");
  EXPECT_EQ(read.events[0].sources.at(1).calls, 2);
  ASSERT_TRUE(read.events[0].spread);
  EXPECT_EQ(read.events[0].spread->median_ms, 2.25);
  EXPECT_EQ(read.steps[0].slowest, 1);
  EXPECT_EQ(read.process.worker_id, 3);
  EXPECT_EQ(read.clock.offset_ns, -1234);
  EXPECT_EQ(read.processes.at(0).summary_path, "/tmp/x/43.json.summary.json");
}

TEST(SummaryReaderTest, TheSummaryNamesTheProcessAndTheWindowsStartOnTheWallClock) {
  const int64_t before = internal::RealtimeNs();
  EnableProfiler(ProfilerState::kCPU);
  const int64_t after = internal::RealtimeNs();
  { RecordEvent e("e"); }
  const Report report = StopProfiler();
  EXPECT_EQ(report.process.pid, getpid());
  EXPECT_FALSE(report.process.host.empty());
  EXPECT_EQ(report.process.role, "main");
  EXPECT_FALSE(report.process.parent_pid);
  EXPECT_GE(report.clock.unix_ns, before);
  EXPECT_LE(report.clock.unix_ns, after);
  EXPECT_EQ(report.clock.offset_ns, 0);
  const nlohmann::json j = nlohmann::json::parse(report.ToJson());
  EXPECT_EQ(j["process"]["pid"], getpid());
  EXPECT_TRUE(j["process"]["rank"].is_null());
  EXPECT_TRUE(j["processes"].empty());
}

TEST(SummaryReaderTest, PaddlesLauncherNamesTheRankWhereRankIsNotSet) {
  setenv("PADDLE_TRAINER_ID", "3", 1);
  setenv("PADDLE_TRAINERS_NUM", "4", 1);
  EnableProfiler(ProfilerState::kCPU);
  const Report paddles = StopProfiler(EventSortingKey::kTotal, "");
  setenv("RANK", "1", 1);  // torchrun's names come first
  setenv("WORLD_SIZE", "2", 1);
  EnableProfiler(ProfilerState::kCPU);
  const Report torchs = StopProfiler(EventSortingKey::kTotal, "");
  for (const char* name : {"PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "RANK", "WORLD_SIZE"}) {
    unsetenv(name);
  }
  EXPECT_EQ(paddles.process.rank, 3);
  EXPECT_EQ(paddles.process.world_size, 4);
  EXPECT_EQ(torchs.process.rank, 1);
  EXPECT_EQ(torchs.process.world_size, 2);
}

TEST(SummaryReaderTest, RankComesFromTheEnvironmentAndFillsPathsAndTheTrace) {
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  const std::string dir = ::testing::TempDir();
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("e"); }
  const Report report = StopProfiler(EventSortingKey::kTotal, dir + "/rank{rank}.{pid}.json");
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  EXPECT_EQ(report.process.rank, 1);
  EXPECT_EQ(report.process.world_size, 2);
  const std::string path = dir + "/rank1." + std::to_string(getpid()) + ".json";
  EXPECT_EQ(report.summary_path, path + ".summary.json");
  const nlohmann::json trace = testing::ReadJson(path);
  EXPECT_EQ(trace["distributedInfo"]["rank"], 1);
  EXPECT_EQ(trace["distributedInfo"]["world_size"], 2);
  // Holistic Trace Analysis matches `"rank":\s+(\d+)` in the text, as PyTorch writes it.
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(R"("distributedInfo":{"rank": 1, "world_size": 2})"), std::string::npos)
      << text.substr(0, 200);
  EXPECT_EQ(trace["baseTimeNanoseconds"], report.clock.unix_ns);
  EXPECT_EQ(LoadSummary(path + ".summary.json").process.rank, 1);
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
}

TEST(SummaryReaderTest, PathFieldsWithoutARankAndOtherBracesStay) {
  ProcessInfo p;
  p.pid = 12;
  p.host = "node1";
  EXPECT_EQ(internal::ExpandPathFields("/r/{host}/{rank}-{pid}-{cycle}.json", p),
            "/r/node1/0-12-{cycle}.json");
}

// JSON lets an object repeat a name; as with any field, the first of them counts, so a
// timeline never gains a second label's points or a category's second series.
TEST(SummaryReaderTest, OfMembersThatShareANameTheFirstCounts) {
  const std::string json = Profiled().ToJson();
  const auto inserted = [&json](const std::string& after, const std::string& members) {
    std::string changed = json;
    const size_t at = changed.find(after);
    EXPECT_NE(at, std::string::npos) << after;
    return changed.insert(at + after.size(), members);
  };
  const Report read = ReportFromJson(
      inserted(R"("timeline":{)",
               R"("CPU":{"t_ms":[0,1],"bytes":[5,6],"by_category":{"x":[1,2],"x":[3]}},)"),
      "test");
  const TimelinePoints& cpu = read.timeline.at("CPU");
  EXPECT_EQ(cpu.t_ms, (std::vector<double>{0, 1}));
  EXPECT_EQ(cpu.bytes, (std::vector<int64_t>{5, 6}));
  ASSERT_EQ(cpu.by_category.size(), 1u);
  EXPECT_EQ(cpu.by_category.at("x"), (std::vector<int64_t>{1, 2}));
  const Report steps =
      ReportFromJson(inserted(R"("peak_bytes":{)", R"("CPU":7,"CPU":8,)"), "test");
  EXPECT_EQ(steps.steps.at(0).peak_bytes.at("CPU"), 7);
  EXPECT_EQ(ReportFromJson(inserted(R"("wall_ms":)", R"(1.5,"wall_ms":)"), "test").wall_ms, 1.5);
}

TEST(SummaryReaderTest, WhatIsNotASummaryIsAnErrorNamingItsSource) {
  const auto message = [](const std::string& text) {
    try {
      ReportFromJson(text, "/some/file.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{not json"), "/some/file.json: not a paddle_prof summary (not JSON)");
  EXPECT_EQ(message(R"({"traceEvents": []})"),
            "/some/file.json: not a paddle_prof summary (no version or events)");
  EXPECT_EQ(message(R"({"version": 2, "events": []})"),
            "/some/file.json: a paddle_prof summary of version 2; this paddle_prof reads "
            "version 1");
  EXPECT_NE(message(R"({"version": 1, "events": [{"name": 3}]})")
                .find("/some/file.json: not a paddle_prof summary ("),
            std::string::npos);
  EXPECT_THROW(LoadSummary("/no/such/file.summary.json"), std::invalid_argument);
  try {  // a directory opens as a stream that reads nothing: not "not JSON"
    LoadSummary("/tmp");
    ADD_FAILURE() << "a directory read as a summary";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "/tmp: cannot read it (Is a directory)");
  }
}

// What no writer writes, however deep or large, is an error naming the source, never a
// crash: JSON nested past any summary (nlohmann's parser and dump() recurse per level),
// numbers that the report's types or sums cannot hold.
TEST(SummaryReaderTest, WhatNoWriterWritesIsAnErrorNamingItsSource) {
  const auto message = [](const std::string& text) {
    try {
      ReportFromJson(text, "/some/file.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string deep =
      R"({"version":)" + std::string(100000, '[') + std::string(100000, ']') + R"(,"events":[]})";
  EXPECT_EQ(message(deep),
            "/some/file.json: not a paddle_prof summary (nesting deeper than 512 at byte 522)");
  EXPECT_EQ(message(R"({"version": "1", "events": []})"),
            "/some/file.json: not a paddle_prof summary (its version is string, not a number)");
  nlohmann::json summary = nlohmann::json::parse(Profiled().ToJson());
  const auto with = [&summary](const nlohmann::json::json_pointer& at,
                               const nlohmann::json& value) {
    nlohmann::json changed = summary;
    changed[at] = value;
    return changed.dump();
  };
  EXPECT_EQ(message(with("/events/0/process"_json_pointer, 1.3883e22)),
            "/some/file.json: not a paddle_prof summary ('process' is 1.3883e+22, not an integer "
            "from -9223372036854775808 to 9223372036854775807)");
  EXPECT_NE(message(with("/events/0/calls"_json_pointer, UINT64_MAX))
                .find("'calls' is 18446744073709551615, not an integer"),
            std::string::npos);
  // Bytes and counts are never negative: one would read as less memory or fewer calls.
  EXPECT_EQ(message(with("/places/0/peak_bytes"_json_pointer, -5)),
            "/some/file.json: not a paddle_prof summary ('peak_bytes' is -5, not an integer "
            "from 0 to 9223372036854775807)");
  EXPECT_NE(message(with("/events/0/memory/CPU/live_bytes"_json_pointer, -1))
                .find("'live_bytes' is -1, not an integer from 0 to"),
            std::string::npos);
  EXPECT_NE(message(with("/events/0/calls"_json_pointer, -2))
                .find("'calls' is -2, not an integer from 0 to"),
            std::string::npos);
  EXPECT_NE(message(with("/steps/0/peak_bytes/CPU"_json_pointer, -1))
                .find("'peak_bytes' is -1, not an integer from 0 to"),
            std::string::npos);
  EXPECT_NE(message(with("/events/0/total_ms"_json_pointer, -1e308))
                .find("'total_ms' is -1e+308, not a number from -1e300 to 1e300"),
            std::string::npos);
  EXPECT_NE(message(with("/clock/offset_ns"_json_pointer, INT64_MAX))
                .find("'offset_ns' is 9223372036854775807"),
            std::string::npos);
  EXPECT_NE(message(with("/timeline/CPU/bytes"_json_pointer, {0}))
                .find("timeline 'CPU' is not two arrays of one length"),
            std::string::npos);
  EXPECT_NE(message(with("/events/0/min_ms"_json_pointer, 1e9))
                .find("in row 'outer', 'min_ms' is above 'max_ms'"),
            std::string::npos);
  EXPECT_NE(message(with("/events/0/gpu_total_ms"_json_pointer, 1))
                .find("in row 'outer', 'gpu_total_ms', 'gpu_min_ms' and 'gpu_max_ms' are not all "
                      "null or all numbers"),
            std::string::npos);
  EXPECT_EQ(message(summary.dump()), "no error");
}

}  // namespace
}  // namespace paddle_prof
