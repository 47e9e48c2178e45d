// The Chrome trace written by DisableProfiler(key, path): valid JSON, one complete
// event per counted call, named thread tracks, steps as ranges.
#include "chrome_trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

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
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
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
  c.memory_events.push_back({1000 + 3, 0, 5, nullptr, nullptr});  // 1.5 ns
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
    EXPECT_EQ(e.at("cat"), "");
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
  std::remove(path.c_str());
  std::remove((path + ".summary.json").c_str());
}

TEST(ChromeTraceTest, ReportsAnUnwritablePath) {
  internal::Collection empty;
  std::string error;
  EXPECT_FALSE(internal::WriteChromeTrace(empty, "/nonexistent-dir/t.json", &error));
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace paddle_prof
