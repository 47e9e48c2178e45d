// Names that are not plain text, end to end: NUL bytes keep names apart, bytes that are
// not UTF-8 still give valid files, control characters stay inside their row.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::PlaceOf;
using testing::ReadJson;
using testing::Row;
using testing::TempPath;

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Calls per name in the trace's complete events.
std::map<std::string, int> TraceCalls(const nlohmann::json& trace) {
  std::map<std::string, int> calls;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") ++calls[e.at("name").get<std::string>()];
  }
  return calls;
}

TEST(NamesTest, NulBytesKeepDynamicNamesApart) {
  const std::string path = TempPath("nul_names");
  const std::string ab("a\0b", 3), ac("a\0c", 3), nul("\0", 1), nul_tag("t\0u", 3);
  EnableProfiler(ProfilerState::kCPU);
  for (int i = 0; i < 2; ++i) RecordEvent e(ab);
  for (int i = 0; i < 3; ++i) RecordEvent e(ac);
  { RecordEvent e("op", nul_tag); }
  { RecordEvent e(nul, nul + nul); }
  const Report report = StopProfiler(EventSortingKey::kCalls, path);

  ASSERT_EQ(report.events.size(), 4u);
  EXPECT_EQ(Row(report, ab).calls, 2);
  EXPECT_EQ(Row(report, ac).calls, 3);
  EXPECT_EQ(Row(report, "op", nul_tag).calls, 1);
  EXPECT_EQ(Row(report, nul, nul + nul).calls, 1);

  const nlohmann::json summary = ReadJson(path + ".summary.json");
  std::map<std::string, int> summary_calls;
  for (const auto& e : summary.at("events")) {
    summary_calls[e.at("name").get<std::string>()] += e.at("calls").get<int>();
  }
  EXPECT_EQ(summary_calls, (std::map<std::string, int>{{ab, 2}, {ac, 3}, {"op", 1}, {nul, 1}}));
  EXPECT_EQ(TraceCalls(ReadJson(path)),
            (std::map<std::string, int>{{ab, 2}, {ac, 3}, {"op", 1}, {nul, 1}}));
  const std::string table = report.Table();
  for (const char* label : {"\na\\0c  ", "\na\\0b  ", "\nop [t\\0u]  ", "\n\\0 [\\0\\0]  "}) {
    EXPECT_NE(table.find(label), std::string::npos) << label << "\n" << table;
  }
  testing::RemoveProfileFiles(path);
}

TEST(NamesTest, BytesThatAreNotUtf8StillGiveValidFiles) {
  const std::string path = TempPath("invalid_utf8_names");
  const std::string name =
      "conv\xFF"
      "2d";
  const std::string cut_tag = "[\xE4\xB8";  // a character cut short
  EnableProfiler(ProfilerState::kCPU);
  std::thread([&] {
    // A thread name cut at 15 bytes, inside a character: "w" and half of "线程".
    pthread_setname_np(pthread_self(), "w\xE7\xBA\xBF\xE7");
    for (int i = 0; i < 2; ++i) RecordEvent e(name, cut_tag);
  }).join();
  const Report report = StopProfiler(EventSortingKey::kCalls, path);

  EXPECT_EQ(Row(report, name, cut_tag).calls, 2);  // the C++ report keeps the bytes
  const nlohmann::json summary = ReadJson(path + ".summary.json");  // throws if not UTF-8
  ASSERT_EQ(summary.at("events").size(), 1u);
  EXPECT_EQ(summary.at("events")[0].at("name"), "conv" + kFffd + "2d");
  EXPECT_EQ(summary.at("events")[0].at("tag"), "[" + kFffd);
  const nlohmann::json trace = ReadJson(path);
  EXPECT_EQ(TraceCalls(trace), (std::map<std::string, int>{{"conv" + kFffd + "2d", 2}}));
  int named = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("name") != "thread_name") continue;
    const std::string thread = e.at("args").at("name");
    const std::string suffix = " (w\xE7\xBA\xBF" + kFffd + ")";
    named += thread.size() > suffix.size() &&
             thread.compare(thread.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  EXPECT_EQ(named, 1);
  const std::string table = report.Table();
  EXPECT_NE(table.find("\nconv" + kFffd + "2d [" + kFffd + "  2  "), std::string::npos) << table;
  EXPECT_EQ(table.find('\xFF'), std::string::npos);
  testing::RemoveProfileFiles(path);
}

TEST(NamesTest, MemoryHoldersKeepTheirNamesWhole) {
  const std::string name("a\0b", 3), tag("line\nbreak");
  const void* block = reinterpret_cast<const void*>(0x100000000000);  // never dereferenced
  EnableProfiler(ProfilerState::kCPU);
  {
    RecordEvent e(name, tag);
    RecordAlloc(CPUPlace(), block, 1000);
  }
  const Report report = StopProfiler();
  RecordFree(CPUPlace(), block);

  EXPECT_EQ(testing::MemoryOn(Row(report, name, tag), "CPU").live_bytes, 1000);
  const PlaceSummary& cpu = PlaceOf(report, "CPU");
  ASSERT_EQ(cpu.at_peak.size(), 1u);
  EXPECT_EQ(cpu.at_peak[0].name, name);
  EXPECT_EQ(cpu.at_peak[0].tag, tag);
  EXPECT_EQ(cpu.at_peak[0].bytes, 1000);
  const std::string table = report.Table();
  EXPECT_NE(table.find("; at the peak held by a\\0b [line\\nbreak] 1000 B\n"), std::string::npos)
      << table;
}

}  // namespace
}  // namespace paddle_prof
