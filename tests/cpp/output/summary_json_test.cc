// The summary JSON: its schema, the file equal to Report::ToJson(), and
// numbers that read back exactly.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::Row;
using testing::TempPath;

TEST(SummaryJsonTest, FileEqualsToJsonAndNumbersRoundTrip) {
  const std::string path = TempPath("summary");
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 1000; ++i) RecordEvent e("tiny");  // about 20 ns each
  {
    RecordEvent e("tagged", "[1000, 784]");
    MarkStep();
  }
  const Report report = StopProfiler(EventSortingKey::kCalls, path);

  std::ifstream in(path + ".summary.json");
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), report.ToJson());
  const nlohmann::json j = nlohmann::json::parse(file.str());

  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("state"), "CPU");
  EXPECT_EQ(j.at("sorted_by"), "calls");
  EXPECT_EQ(j.at("wall_ms").get<double>(), report.wall_ms);
  EXPECT_EQ(j.at("dropped_events"), 0);
  EXPECT_TRUE(j.at("places").is_array());
  EXPECT_TRUE(j.at("warnings").is_array());
  ASSERT_EQ(j.at("steps").size(), 1u);
  EXPECT_EQ(j.at("steps")[0].at("step"), 0);
  EXPECT_EQ(j.at("steps")[0].at("wall_ms").get<double>(), report.steps[0].wall_ms);

  ASSERT_EQ(j.at("events").size(), report.events.size());
  for (size_t i = 0; i < report.events.size(); ++i) {
    const EventRow& row = report.events[i];
    const nlohmann::json& e = j.at("events")[i];
    SCOPED_TRACE(row.name);
    EXPECT_EQ(e.at("name"), row.name);
    EXPECT_TRUE(e.at("thread").is_null());
    EXPECT_EQ(e.at("calls"), row.calls);
    // Shortest round-trip doubles: what is read back is bit-for-bit what was computed.
    EXPECT_EQ(e.at("total_ms").get<double>(), row.total_ms);
    EXPECT_EQ(e.at("self_ms").get<double>(), row.self_ms);
    EXPECT_EQ(e.at("min_ms").get<double>(), row.min_ms);
    EXPECT_EQ(e.at("max_ms").get<double>(), row.max_ms);
    EXPECT_EQ(e.at("ave_ms").get<double>(), row.ave_ms);
    EXPECT_EQ(e.at("ratio").get<double>(), row.ratio);
    for (const char* gpu : {"gpu_total_ms", "gpu_min_ms", "gpu_max_ms", "gpu_ave_ms"}) {
      EXPECT_TRUE(e.at(gpu).is_null()) << gpu;
    }
    EXPECT_TRUE(e.at("memory").is_object());
  }
  const nlohmann::json& tiny = j.at("events")[0];
  EXPECT_EQ(tiny.at("name"), "tiny");
  EXPECT_TRUE(j.at("events")[1].at("tag") == "[1000, 784]");
  EXPECT_TRUE(tiny.at("tag").is_null());
  // A scope of tens of nanoseconds is not rounded away.
  EXPECT_GT(tiny.at("ave_ms").get<double>(), 0);
  EXPECT_LT(tiny.at("ave_ms").get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(tiny.at("ave_ms").get<double>() * 1000, tiny.at("total_ms").get<double>());
  testing::RemoveProfileFiles(path);
}

TEST(SummaryJsonTest, EscapesStringsAndWritesNonFiniteAsNull) {
  Report report;
  report.events.emplace_back();
  report.events[0].name = "a\"b\\c\n\x01";
  report.events[0].total_ms = std::numeric_limits<double>::infinity();
  report.warnings.push_back("tab\there");
  const nlohmann::json j = nlohmann::json::parse(report.ToJson());
  EXPECT_EQ(j.at("events")[0].at("name"), "a\"b\\c\n\x01");
  EXPECT_TRUE(j.at("events")[0].at("total_ms").is_null());
  EXPECT_EQ(j.at("warnings")[0], "tab\there");
}

// A C++ name may hold any bytes; the summary must still be valid JSON (and UTF-8).
TEST(SummaryJsonTest, ReplacesInvalidUtf8AndWritesNulAsAnEscape) {
  Report report;
  report.events.emplace_back();
  report.events[0].name = std::string(
      "\xFF"
      "a\xE4\xB8"
      "b\xED\xA0\x80"
      "c\0d\xC0\x80"
      "e",
      14);
  report.events[0].tag = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF0\x9F\x98";  // é€😀, a cut 😀
  report.warnings.push_back(
      "held by conv\xFF"
      "2d");
  const std::string json = report.ToJson();
  const std::string kFffd = "\xEF\xBF\xBD";
  EXPECT_NE(json.find("\"name\":\"" + kFffd + "a" + kFffd + "b" + kFffd + kFffd + kFffd +
                      "c\\u0000d\\u0000e\""),
            std::string::npos)
      << json;
  const nlohmann::json j = nlohmann::json::parse(json);  // throws on invalid UTF-8
  EXPECT_EQ(j.at("events")[0].at("tag"), "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80" + kFffd);
  EXPECT_EQ(j.at("warnings")[0], "held by conv" + kFffd + "2d");
}

}  // namespace
}  // namespace paddle_prof
