// The Chrome trace written by DisableProfiler(key, path): valid JSON, one complete
// event per counted call, named thread tracks, steps as ranges.
#include "chrome_trace.h"

#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "flags.h"
#include "memory_timeline.h"
#include "op_details.h"
#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::MemoryTest;
using testing::PlaceOf;
using testing::ReadJson;
using testing::TempPath;

TEST(ChromeTraceTest, OneCompleteEventPerCallOnNamedThreadTracks) {
  const std::string path = TempPath("trace");
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent cut("cut_by_reset");
    ResetProfiler();
  }
  for (int i = 0; i < 3; ++i) {
    RecordEvent step("train_step");
    RecordEvent op("conv2d", "[1, 3]");
    MarkStep();
  }
  std::thread([] {
    for (int i = 0; i < 4; ++i) RecordEvent e("loader \"quoted\"");
  }).join();
  const Report report = StopProfiler(EventSortingKey::kTotal, path);

  const nlohmann::json trace = ReadJson(path);
  std::map<std::string, int> x_events;
  std::map<int, std::string> thread_names;
  int steps = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      thread_names[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
    }
    if (e.at("ph") != "X") continue;
    EXPECT_GE(e.at("ts").get<double>(), 0);
    EXPECT_GE(e.at("dur").get<double>(), 0);
    EXPECT_LE(e.at("ts").get<double>() + e.at("dur").get<double>(), report.wall_ms * 1000 + 1e-6);
    if (e.at("cat") == "step") {
      ++steps;
      continue;
    }
    ++x_events[e.at("name").get<std::string>()];
    if (e.at("name") == "conv2d") EXPECT_EQ(e.at("args").at("tag"), "[1, 3]");
  }
  for (const EventRow& row : report.events) EXPECT_EQ(x_events[row.name], row.calls) << row.name;
  EXPECT_EQ(x_events.count("cut_by_reset"), 0u);
  EXPECT_EQ(x_events["loader \"quoted\""], 4);
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(thread_names[0], "steps");
  EXPECT_EQ(thread_names.size(), 3u);  // steps, main thread, loader thread
  testing::RemoveProfileFiles(path);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChromeTraceTest, TimesAreMicrosecondsWithThreeDecimalsOfWholeNanoseconds) {
  internal::Collection c;
  c.start_tick = 1000;
  c.end_tick = 1000 + 10'000'000'000'000;  // 5,000 s at 2 ticks per nanosecond
  c.ns_per_tick = 0.5;
  c.steps.resize(3);
  c.steps[0].tick = 1000 + 2'469'134;              // 1,234,567 ns
  c.steps[1].tick = c.steps[0].tick + 2'001;       // 1,000.5 ns later: rounded down
  c.steps[2].tick = 1000 + 8'000'000'000'000 + 1;  // 4,000 s and half a nanosecond
  c.places.push_back({"CPU", 0, 10, 10, 0, {}});
  c.memory_events.push_back({1000 + 3, 0, 0, -1, 5, nullptr, nullptr});  // 1.5 ns
  const std::string path = TempPath("trace_times");
  std::string error;
  ASSERT_TRUE(internal::WriteChromeTrace(c, path, &error)) << error;
  const std::string text = ReadText(path);
  EXPECT_NE(text.find(R"("ts":0.000,"dur":1234.567})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ts":1234.567,"dur":1.000})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ts":1235.567,"dur":3999998764.433})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ts":0.000,"args":{"bytes":10}})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ts":0.001,"args":{"bytes":15}})"), std::string::npos) << text;
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_EQ(trace.at("traceEvents").size(), 1u + 2 + 3 + 2);  // process, steps track, counter
  std::remove(path.c_str());
}

// Each call has Kineto's category: a framework's op, a module's event, any other scope.
TEST(ChromeTraceTest, CallsHaveKinetosCategories) {
  const std::string path = TempPath("trace_categories");
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent step("train_step");
    RecordEvent module("nn.Module: Net.fc1");
    RecordEvent op("aten::linear");
    RecordEvent node("autograd::engine::evaluate_function: AddmmBackward0");
    RecordEvent plain("matmul");  // an op only where a framework names them so (Paddle)
    RecordEvent other("c10d::allreduce_");
    RecordEvent node_scope("MulBackward0");
    RecordEvent optimizer("Optimizer.step#SGD.step");
  }
  StopProfiler(EventSortingKey::kTotal, path);
  const nlohmann::json trace = nlohmann::json::parse(ReadText(path));
  std::map<std::string, std::string> cat;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") cat[e.at("name")] = e.at("cat");
  }
  EXPECT_EQ(cat, (std::map<std::string, std::string>{
                     {"train_step", "user_annotation"},
                     {"nn.Module: Net.fc1", "python_function"},
                     {"aten::linear", "cpu_op"},
                     {"autograd::engine::evaluate_function: AddmmBackward0", "cpu_op"},
                     {"matmul", "user_annotation"},
                     {"c10d::allreduce_", "cpu_op"},
                     {"MulBackward0", "cpu_op"},
                     {"Optimizer.step#SGD.step", "user_annotation"}}));
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
}

// An op autograd recorded carries Kineto's fields, and a forward op is linked to its
// backward node by an arrow: of the forward ops with the node's sequence number on its
// forward thread, the one that began last (the others made no node of their own).
TEST(ChromeTraceTest, AForwardOpIsLinkedToItsBackwardNode) {
  const std::string path = TempPath("trace_fwdbwd");
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent view("aten::view");
    internal::NoteOpSequence(&view, 7, 0, 1);
  }
  {
    RecordEvent mul("aten::mul");
    internal::NoteOpSequence(&mul, 7, 0, 1);
  }
  {
    RecordEvent zeros("aten::zeros");  // recorded without a number
  }
  {
    RecordEvent node("autograd::engine::evaluate_function: MulBackward0");
    internal::NoteOpSequence(&node, 7, 1, 2);
    RecordEvent inner("aten::mul");  // a number noted for another scope is not its
    internal::NoteOpSequence(&node, 8, 0, 2);
  }
  {
    RecordEvent orphan("autograd::engine::evaluate_function: AddBackward0");
    internal::NoteOpSequence(&orphan, 3, 1, 2);  // its forward op ran before the window
  }
  StopProfiler(EventSortingKey::kTotal, path);
  const nlohmann::json trace = nlohmann::json::parse(ReadText(path));
  std::map<std::string, std::vector<nlohmann::json>> ops;
  std::vector<nlohmann::json> flows;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") ops[e.at("name")].push_back(e);
    if (e.value("cat", "") == "fwdbwd") flows.push_back(e);
  }
  const nlohmann::json& mul = ops.at("aten::mul").at(0);
  EXPECT_EQ(mul.at("args").at("Sequence number"), 7);
  EXPECT_EQ(mul.at("args").at("Fwd thread id"), 0);
  EXPECT_FALSE(ops.at("aten::mul").at(1).contains("args"));  // the node's inner op
  EXPECT_FALSE(ops.at("aten::zeros").at(0).contains("args"));
  const nlohmann::json& node = ops.at("autograd::engine::evaluate_function: MulBackward0").at(0);
  EXPECT_EQ(node.at("args").at("Sequence number"), 7);
  EXPECT_EQ(node.at("args").at("Fwd thread id"), 1);
  std::set<int64_t> external_ids;
  for (const auto& [name, events] : ops) {
    for (const auto& e : events) {
      if (e.contains("args")) external_ids.insert(e.at("args").at("External id").get<int64_t>());
    }
  }
  EXPECT_EQ(external_ids.size(), 4u);  // view, mul, and the two nodes: one id each
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].at("ph"), "s");
  EXPECT_EQ(flows[0].at("ts"), mul.at("ts"));
  EXPECT_EQ(flows[0].at("tid"), mul.at("tid"));
  EXPECT_EQ(flows[1].at("ph"), "f");
  EXPECT_EQ(flows[1].at("bp"), "e");
  EXPECT_EQ(flows[1].at("ts"), node.at("ts"));
  EXPECT_EQ(flows[0].at("id"), flows[1].at("id"));
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
}

// An op's inputs, as a bridge notes them, become Kineto's `Input Dims` and `Input
// type` beside its tag; what is not a bridge's writing (a torn capture) becomes nothing.
TEST(ChromeTraceTest, AnOpsInputsBecomeInputDimsAndTypes) {
  const std::string path = TempPath("trace_inputs");
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent cat("aten::cat", "[[[2, 3], [4, 3]]]");
    internal::NoteOpInputs(&cat, R"([[[[2, 3], [4, 3]], []], ["TensorList", "Scalar"]])");
  }
  {
    RecordEvent empty("aten::empty", "[[64, 16, 28, 28]]");
    internal::NoteOpInputs(&empty, R"([[[64, 16, 28, 28], [], []], ["ScalarList", "Scalar", ""]])");
  }
  for (const char* torn : {R"([[[2]], ["float", "float"]])", R"([[["2"]], ["float"]])",
                           R"([[[2]], [1]])", "[[[2]]", R"({"Input Dims": [[2]]})"}) {
    RecordEvent relu("aten::relu", "[[2]]");
    internal::NoteOpInputs(&relu, torn);
  }
  StopProfiler(EventSortingKey::kTotal, path);
  const nlohmann::json trace = nlohmann::json::parse(ReadText(path));
  std::map<std::string, std::vector<nlohmann::json>> args;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") args[e.at("name")].push_back(e.at("args"));
  }
  EXPECT_EQ(args.at("aten::cat").at(0).at("Input Dims"),
            nlohmann::json::parse("[[[2, 3], [4, 3]], []]"));
  EXPECT_EQ(args.at("aten::cat").at(0).at("Input type"),
            nlohmann::json::parse(R"(["TensorList", "Scalar"])"));
  EXPECT_EQ(args.at("aten::cat").at(0).at("tag"), "[[[2, 3], [4, 3]]]");
  EXPECT_EQ(args.at("aten::empty").at(0).at("Input Dims"),
            nlohmann::json::parse("[[64, 16, 28, 28], [], []]"));
  EXPECT_EQ(args.at("aten::empty").at(0).at("Input type"),
            nlohmann::json::parse(R"(["ScalarList", "Scalar", ""])"));
  ASSERT_EQ(args.at("aten::relu").size(), 5u);
  for (const nlohmann::json& relu : args.at("aten::relu")) {
    EXPECT_EQ(relu, nlohmann::json::parse(R"({"tag": "[[2]]"})"));
  }
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
}

// Over a megabyte, so the file is written in several pieces; one name under several
// tags on two threads, each event with its own.
TEST(ChromeTraceTest, EachCallKeepsItsTagThreadAndTimesInALargeTrace) {
  const std::string path = TempPath("trace_large");
  constexpr int kCalls = 6000;
  EnableProfiler(ProfilerState::kCPU);
  auto calls = [] {
    for (int i = 0; i < kCalls; ++i) {
      RecordEvent tagged("op", i % 2 == 0 ? "a" : "b \"quoted\"");
      RecordEvent untagged("op");
    }
  };
  calls();
  std::thread(calls).join();
  const Report report = StopProfiler(EventSortingKey::kTotal, path);

  const std::string text = ReadText(path);
  EXPECT_GT(text.size(), size_t{1} << 20);
  const nlohmann::json trace = nlohmann::json::parse(text);
  std::map<std::pair<int, std::string>, int> calls_by_tid_and_tag;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    EXPECT_EQ(e.at("name"), "op");
    EXPECT_EQ(e.at("cat"), "user_annotation");
    EXPECT_LE(e.at("ts").get<double>() + e.at("dur").get<double>(), report.wall_ms * 1000 + 1e-6);
    const std::string tag = e.contains("args") ? e.at("args").at("tag").get<std::string>() : "-";
    ++calls_by_tid_and_tag[{e.at("tid").get<int>(), tag}];
  }
  ASSERT_EQ(calls_by_tid_and_tag.size(), 6u);  // two threads, three tags
  for (const auto& [tid_and_tag, calls] : calls_by_tid_and_tag) {
    EXPECT_EQ(calls, tid_and_tag.second == "-" ? kCalls : kCalls / 2) << tid_and_tag.second;
  }
  // Every time has exactly three decimals.
  const std::regex time(R"re("(ts|dur)":([0-9]+\.[0-9]{3}[,}])?)re");
  size_t times = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), time); it != std::sregex_iterator();
       ++it) {
    EXPECT_TRUE((*it)[2].matched) << text.substr(it->position(), 40);
    ++times;
  }
  EXPECT_GE(times, 4u * kCalls * 2);
  testing::RemoveProfileFiles(path);
}

using Point = std::pair<int64_t, int64_t>;  // of a counter: nanoseconds, bytes

// The points of the counter track `name`, in the file's order.
std::vector<Point> CounterPoints(const nlohmann::json& trace, const std::string& name) {
  std::vector<Point> points;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "C" || e.at("name") != name) continue;
    points.emplace_back(std::llround(e.at("ts").get<double>() * 1000),
                        e.at("args").at("bytes").get<int64_t>());
  }
  return points;
}

// Allocates and frees `blocks` blocks of varied sizes, ten live at a time, one of them
// far larger: 2 * blocks events. Returns the live bytes after each, in order.
std::vector<int64_t> SlidingBlocks(TrackingAllocator* cpu, int64_t start_bytes, int blocks) {
  std::vector<int64_t> live{start_bytes};
  std::deque<std::pair<void*, int64_t>> held;
  auto free_oldest = [&] {
    cpu->Free(held.front().first);
    live.push_back(live.back() - held.front().second);
    held.pop_front();
  };
  for (int i = 0; i < blocks; ++i) {
    const int64_t size = i == blocks * 5 / 8 ? 1 << 20 : 64 + (i * 37 % 101) * 8;
    held.emplace_back(cpu->Allocate(size), size);
    live.push_back(live.back() + size);
    if (held.size() > 10) free_oldest();
  }
  while (!held.empty()) free_oldest();
  return live;
}

TEST_F(MemoryTest, ACounterPastItsBoundKeepsItsPeakExactlyInTheBoundsPoints) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_trace_counter_points = 1000;
  const std::string path = TempPath("trace_bounded");
  void* before = cpu_.Allocate(4096);
  EnableProfiler(ProfilerState::kCPU);
  const std::vector<int64_t> live = SlidingBlocks(&cpu_, 0, 50000);  // 100,000 events
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  const PlaceSummary& place = PlaceOf(report, "CPU");

  const auto points = CounterPoints(ReadJson(path), "Memory CPU");
  EXPECT_LE(points.size(), 1000u);
  // Buckets split time, not events: a descheduled thread leaves some empty.
  EXPECT_GT(points.size(), 100u);
  int64_t highest = points.front().second;
  for (const auto& [ns, bytes] : points) highest = std::max(highest, bytes);
  EXPECT_EQ(highest, place.peak_bytes);
  EXPECT_EQ(highest, place.start_bytes + *std::max_element(live.begin(), live.end()));
  EXPECT_EQ(points.front(), Point(0, place.start_bytes));
  EXPECT_EQ(points.back().second, place.end_bytes);
  // The points are moments of the replay, in time order.
  size_t next = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) EXPECT_LE(points[i - 1].first, points[i].first);
    while (next < live.size() && place.start_bytes + live[next] != points[i].second) ++next;
    EXPECT_LT(next++, live.size()) << "point " << i << " is no moment of the replay";
  }
  cpu_.Free(before);
  testing::RemoveProfileFiles(path);
}

TEST_F(MemoryTest, ACounterWithinItsBoundHasAPointPerAllocationAndFree) {
  gflags::FlagSaver restore_flags;
  FLAGS_paddle_prof_trace_counter_points = 1000;
  const std::string path = TempPath("trace_unbounded");
  EnableProfiler(ProfilerState::kCPU);
  const std::vector<int64_t> live = SlidingBlocks(&cpu_, 0, 499);  // 998 events, 999 points
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  const int64_t start = PlaceOf(report, "CPU").start_bytes;

  const auto points = CounterPoints(ReadJson(path), "Memory CPU");
  ASSERT_EQ(points.size(), live.size());
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].second, start + live[i]) << i;
  testing::RemoveProfileFiles(path);
}

// A hand-made timeline of 12 events in four buckets of 250 ticks (1 ns each).
TEST(ChromeTraceTest, EachBucketKeepsItsLowAndHighInTimeOrderAndTheTrackItsLastPoint) {
  internal::Collection c;
  c.end_tick = 999;
  c.places.push_back({"CPU", 0, 100, 105, 0, {}});
  const std::vector<std::pair<uint64_t, int64_t>> deltas = {
      {10, 5},    {20, -10}, {30, 20},   {40, -15},  // 105 95 115 100: low, then high
      {300, 100},                                    // 200, alone: the peak
      {510, -50}, {520, 0},  {530, -50}, {540, 60},  // 150 150 100 160
      {800, -60}, {900, 10}, {990, -5}};             // 100 110 105: and the last
  for (const auto& [tick, delta] : deltas) {
    c.memory_events.push_back({tick, 0, 0, -1, delta, "op", nullptr});
  }
  const std::string path = TempPath("trace_buckets");
  std::string error;

  c.trace_counter_points = 10;  // 13 points: past it, (10 - 2) / 2 = 4 buckets
  ASSERT_TRUE(internal::WriteChromeTrace(c, path, &error)) << error;
  const std::vector<Point> bounded = {{0, 100},   {20, 95},   {30, 115},  {300, 200}, {530, 100},
                                      {540, 160}, {800, 100}, {900, 110}, {990, 105}};
  EXPECT_EQ(CounterPoints(ReadJson(path), "Memory CPU"), bounded);
  int64_t replayed_peak = 0;
  internal::RowsAtPeak(c.memory_events, 0, 100, &replayed_peak);
  EXPECT_EQ(replayed_peak, 200);

  for (const int64_t bound : {13, 0}) {  // the start and 12 events fit; no bound
    c.trace_counter_points = bound;
    ASSERT_TRUE(internal::WriteChromeTrace(c, path, &error)) << error;
    EXPECT_EQ(CounterPoints(ReadJson(path), "Memory CPU").size(), 13u) << bound;
  }
  c.trace_counter_points = 1;  // counts as 4: one bucket, its low and high, the last
  ASSERT_TRUE(internal::WriteChromeTrace(c, path, &error)) << error;
  const std::vector<Point> one_bucket = {{0, 100}, {20, 95}, {300, 200}, {990, 105}};
  EXPECT_EQ(CounterPoints(ReadJson(path), "Memory CPU"), one_bucket);
  std::remove(path.c_str());
}

TEST(ChromeTraceTest, ReportsAnUnwritablePath) {
  internal::Collection empty;
  std::string error;
  EXPECT_FALSE(internal::WriteChromeTrace(empty, "/nonexistent-dir/t.json", &error));
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace paddle_prof
