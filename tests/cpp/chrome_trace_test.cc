// The Chrome trace written by DisableProfiler(key, path): valid JSON, one complete
// event per counted call, named thread tracks, steps as ranges.
#include "chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
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

TEST(ChromeTraceTest, ReportsAnUnwritablePath) {
  internal::Collection empty;
  std::string error;
  EXPECT_FALSE(internal::WriteChromeTrace(empty, "/nonexistent-dir/t.json", &error));
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace paddle_prof
