// Report::Table(), the text report, on hand-made reports: the layout, times and bytes as
// printed, the memory, per-place and GPU columns, escaped names on one line, empty rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "paddle_prof/report.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::TimedRow;

// One row per line however the names read, columns aligned by characters.
TEST(SummaryJsonTest, TableEscapesNamesAndTagsOnOneLine) {
  Report report;
  for (const char* name : {"two\nlines", "tab\there", "esc\x1B[2J", "nel\xC2\x85",
                           "conv\xFF"
                           "2d"}) {
    report.events.emplace_back();
    report.events.back().name = name;
    report.events.back().calls = 1;
  }
  report.events.emplace_back();
  report.events.back().name = std::string("a\0b", 3);
  report.events.back().tag = "x\r\ny";
  report.events.back().calls = 1;
  report.warnings.push_back("held by two\nlines");
  const std::string table = report.Table();
  // Each label, its width in characters: the Event column is 13 wide, then two spaces.
  const std::pair<std::string, size_t> labels[] = {{"two\\nlines", 10},
                                                   {"tab\\there", 9},
                                                   {"esc\\x1b[2J", 10},
                                                   {"nel\\x85", 7},
                                                   {"conv\xEF\xBF\xBD"
                                                    "2d",
                                                    7},
                                                   {"a\\0b [x\\r\\ny]", 13}};
  for (const auto& [label, chars] : labels) {
    const std::string line = "\n" + label + std::string(15 - chars, ' ') + "1      ";
    EXPECT_NE(table.find(line), std::string::npos) << line << "\n" << table;
  }
  EXPECT_NE(table.find("\nWarning: held by two\\nlines\n"), std::string::npos) << table;
  for (const char raw : {'\r', '\t', '\x1B', '\0', '\xFF'}) {
    EXPECT_EQ(table.find(raw), std::string::npos) << static_cast<int>(raw) << "\n" << table;
  }
}

TEST(SummaryJsonTest, EmptyRowsPrintDashesNotZeros) {
  Report report;
  report.events.emplace_back();
  report.events[0].name = "[no event]";
  const std::string table = report.Table();
  EXPECT_NE(table.find("[no event]  0      -      -     -     -     -     0.00%"),
            std::string::npos)
      << table;
}

constexpr char kBanner[] =
    "\n------------------------->     Profiling Report     <-------------------------\n\n";

TEST(TablePrinterTest, AWholeTableLinesUpItsColumns) {
  Report report;
  report.sorted_by = EventSortingKey::kSelf;
  report.wall_ms = 1234.5678;
  report.steps.resize(2);
  report.events = {TimedRow("conv2d", 2, 3, 2, 1, 2, 0.75),
                   TimedRow("relu", 1, 0.5, 0.5, 0.5, 0.5, 0.2),
                   TimedRow("tiny", 1000, 0.021, 0.021, 0.000015, 0.000042, 0.05)};
  report.events[1].tag = "fp16";  // not bracketed: the table brackets it
  report.warnings = {"x"};
  EXPECT_EQ(report.Table(),
            std::string(kBanner) +
                "Place: CPU  Total Time: 1234.57ms  Sorted by self time in descending order  "
                "Steps: 2\n"
                "Times in milliseconds; Self excludes nested events of the same thread.\n\n"
                "Event        Calls  Total  Self   Min.      Max.      Ave.      Ratio.\n"
                "conv2d       2      3      2      1         2         1.5       75.00%\n"
                "relu [fp16]  1      0.5    0.5    0.5       0.5       0.5       20.00%\n"
                "tiny         1000   0.021  0.021  0.000015  0.000042  0.000021  5.00%\n"
                "\nWarning: x\n");
}

TEST(TablePrinterTest, BytesReadInBinaryUnitsUpToTiB) {
  Report report;
  report.places = {{"CPU", 1310720, 0, 1023, 0, {}},
                   {"CUDA:0",
                    int64_t{3} << 30,
                    1024,
                    1536,
                    2,
                    {{"matmul", "[8, 8]", int64_t{2} << 30},
                     {"[before profiling]", std::nullopt, 768 << 20},
                     {"relu", std::nullopt, 1024},
                     {"fourth", std::nullopt, 1}}},
                   {"native", int64_t{5} << 40, int64_t{2048} << 40, -2048, 0, {}}};
  EXPECT_EQ(report.Table(),
            std::string(kBanner) +
                "Place: CPU  Total Time: 0ms  Sorted by total time in descending order\n"
                "Memory on CPU: peak 1.25 MiB, start 0 B, end 1023 B\n"
                // Lines past 120 columns wrap, their rest indented.
                "Memory on CUDA:0: peak 3.00 GiB, start 1.00 KiB, end 1.50 KiB, 2 untracked "
                "frees; at the peak held by matmul [8, 8]\n"
                "  2.00 GiB, [before profiling] 768.00 MiB, relu 1.00 KiB\n"
                "Memory on native: peak 5.00 TiB, start 2048.00 TiB, end -2.00 KiB\n"
                "Times in milliseconds; Self excludes nested events of the same thread; Peak Mem. "
                "is the most a call held at once, Live\n"
                "  Mem. what is still allocated.\n\n"
                "Event  Calls  Total  Self  Min.  Max.  Ave.  Ratio.  Peak Mem.  Live Mem.\n"
                "(no events recorded)\n");
}

TEST(TablePrinterTest, MemoryColumnsSumThePlacesAndTheDetailedTableShowsEach) {
  Report report;
  report.places = {{"CPU", 0, 0, 0, 0, {}}, {"CUDA:0", 0, 0, 0, 0, {}}};
  report.events = {TimedRow("op", 1, 1, 1, 1, 1, 1), TimedRow("idle", 0, 0, 0, 0, 0, 0)};
  report.events[0].memory["CPU"] = {1024, 2048, 2, 1024, 1, 512};
  report.events[0].memory["CUDA:0"] = {1024, 1024, 1, 0, 0, 0};
  const std::string table = report.Table();
  for (const std::string line :
       {"Event  Calls  Total  Self  Min.  Max.  Ave.  Ratio.   Peak Mem.  Live Mem.",
        "op     1      1      1     1     1     1     100.00%  2.00 KiB   512 B",
        "idle   0      -      -     -     -     -     0.00%    0 B        0 B"}) {
    EXPECT_NE(table.find("\n" + line + "\n"), std::string::npos) << line << "\n" << table;
  }
  EXPECT_EQ(table.find("CPU Alloc"), std::string::npos) << table;
  report.events[0].p50_ms = 1;
  report.events[0].p99_ms = 1;
  report.events[0].durations = {{1000000}, {1}, 0};
  const std::string detailed = report.Table(/*detailed=*/true);
  for (const std::string line :
       {"Event  Calls  Total  Self  Min.  Max.  Ave.  P50  P99  Ratio.   Peak Mem.  Live Mem.  "
        "CPU Alloc  CPU Allocs  CPU Freed  CPU Frees  CUDA:0 Alloc  CUDA:0 Allocs  CUDA:0 Freed  "
        "CUDA:0 Frees",
        "op     1      1      1     1     1     1     1    1    100.00%  2.00 KiB   512 B      "
        "2.00 KiB   2           1.00 KiB   1          1.00 KiB      1              0 B           0",
        "idle   0      -      -     -     -     -     -    -    0.00%    0 B        0 B        "
        "0 B        0           0 B        0          0 B           0              0 B           0"}) {
    EXPECT_NE(detailed.find("\n" + line + "\n"), std::string::npos) << line << "\n" << detailed;
  }
}

TEST(TablePrinterTest, GpuColumnsShowForTheGpuStatesAndOnlyForCalledRows) {
  Report report;
  report.state = ProfilerState::kAll;
  report.events = {TimedRow("matmul", 2, 2, 1, 1, 1, 1), TimedRow("host_only", 1, 1, 1, 1, 1, 0),
                   TimedRow("never_called", 0, 0, 0, 0, 0, 0)};
  report.events[0].gpu_total_ms = 0.25;
  report.events[0].gpu_min_ms = 0.1;
  report.events[0].gpu_max_ms = 0.15;
  report.events[0].gpu_ave_ms = 0.125;
  report.events[2].gpu_total_ms = 0.5;  // no calls: not shown
  const std::string table = report.Table();
  EXPECT_NE(table.find("\nPlace: All  Total Time: 0ms  Sorted by total time in descending order\n"
                       "Times in milliseconds; Self excludes nested events of the same thread; GPU "
                       "is the time the GPU was busy with what a call\n"
                       "  launched, nested calls included.\n\n"),
            std::string::npos)
      << table;
  for (const std::string line :
       {"Event         Calls  Total  Self  Min.  Max.  Ave.  Ratio.   GPU Total  GPU Min.  GPU "
        "Max.  GPU Ave.",
        "matmul        2      2      1     1     1     1     100.00%  0.25       0.1       0.15   "
        "   0.125",
        "host_only     1      1      1     1     1     1     0.00%    -          -         -     "
        "    -",
        "never_called  0      -      -     -     -     -     0.00%    -          -         -     "
        "    -"}) {
    EXPECT_NE(table.find("\n" + line + "\n"), std::string::npos) << line << "\n" << table;
  }
  report.state = ProfilerState::kCPU;
  EXPECT_EQ(report.Table().find("GPU"), std::string::npos) << report.Table();
}

Report ReportWithRows(int rows) {
  Report report;
  for (int i = 0; i < rows; ++i) {
    EventRow row;
    row.name = "op" + std::to_string(i);
    row.calls = 1;
    report.events.push_back(row);
  }
  return report;
}

int RowsPrinted(const std::string& table) {
  int rows = 0;
  for (size_t at = table.find("\nop"); at != std::string::npos; at = table.find("\nop", at + 1)) {
    ++rows;
  }
  return rows;
}

TEST(TablePrinterTest, TheRowLimitKeepsTheFirstRowsAndSaysWhereTheRestAre) {
  Report report = ReportWithRows(60);
  const std::string limited = report.Table();
  EXPECT_EQ(RowsPrinted(limited), Report::kDefaultRowLimit);
  EXPECT_NE(limited.find("\nop49 "), std::string::npos);
  EXPECT_EQ(limited.find("\nop50 "), std::string::npos);
  EXPECT_NE(limited.find("\n(10 more rows, all in the Report: a row limit of 0 prints every "
                         "row)\n"),
            std::string::npos)
      << limited;
  report.summary_path = "/tmp/p.json.summary.json";
  EXPECT_NE(report.Table(false, 55).find("\n(5 more rows, all in /tmp/p.json.summary.json)\n"),
            std::string::npos);
  EXPECT_EQ(RowsPrinted(report.Table(false, 55)), 55);
  EXPECT_NE(report.Table(false, 59).find("\n(1 more row, in /tmp/p.json.summary.json)\n"),
            std::string::npos);
  const std::string all = report.Table(false, 0);
  EXPECT_EQ(RowsPrinted(all), 60);
  EXPECT_EQ(all.find("more row"), std::string::npos);
  EXPECT_EQ(report.Table(false, 60), all);  // exactly the limit: nothing more to say
  EXPECT_EQ(report.events.size(), 60u);     // the Report keeps every row
}


// The layout of the case the product was born from (examples/shape_growth.py under
// run --native): each thing once, in order, within 120 columns, shape tags told apart.
TEST(TablePrinterTest, TheShapeGrowthReportReadsTopToBottom) {
  Report report;
  report.sorted_by = EventSortingKey::kLiveMemory;
  report.wall_ms = 147.5;
  report.steps.resize(24);
  const std::string rest = ", [16, 16, 3, 3], [0], [1, 1], [1, 1], [1, 1], []]";
  for (const int height : {41, 60}) {
    report.events.push_back(TimedRow("aten::mkldnn_convolution", 4, 2.682, 2.642, 0.2331, 1.921));
    report.events.back().tag = "[[1, 16, " + std::to_string(height) + ", 32]" + rest;
    report.events.back().memory["native"] = testing::Memory(260480, 0, 0, 0, 0, 72346);
  }
  report.events.push_back(TimedRow("aten::empty", 4, 0.02, 0.02, 0.004, 0.006));
  report.events.back().tag = "[[1, 144, 1280], [], [], [], [], []]";
  report.places = {{"native", 66936832, 66241536, 66935808, 0, {}}};
  report.places[0].at_peak = {{"[before profiling]", std::nullopt, 66241536},
                              {"aten::mkldnn_convolution",
                               "[[1, 16, 41, 32]" + rest,
                               72346,
                               {"nn.Module: Sequential.2.conv1", "aten::conv2d",
                                "aten::mkldnn_convolution"}}};
  report.warnings = {"live memory grew over 24 steps, from 66,241,536 bytes to 66,935,808 "
                     "bytes at step ends; still-live blocks allocated in later and later steps "
                     "are held by: aten::mkldnn_convolution (694,272 bytes from 15 steps, 15 "
                     "tags: [[1, 16, 41, 32], …] 72,346 bytes, +14 more).",
                     "3 GPU kernel(s) were launched with no event open."};
  report.advice = {{"varying_shapes", "aten::mkldnn_convolution holds 678.00 KiB.",
                    "Bin or pad the inputs to a few sizes.", 694272, std::nullopt}};
  report.notes = {"native: peak_bytes is the highest of the live bytes at step marks."};
  EXPECT_EQ(
      report.Table(),
      std::string(kBanner) +
          "Place: CPU  Total Time: 147.5ms  Sorted by live memory in descending order  Steps: 24\n"
          "Memory on native: peak 63.84 MiB, start 63.17 MiB, end 63.83 MiB; at the peak held by "
          "[before profiling] 63.17 MiB,\n"
          "  nn.Module: Sequential.2.conv1 > aten::mkldnn_convolution\n"
          "  [[1, 16, 41, 32], [16, 16, 3, 3], [0], [1, 1], [1, 1], [1, 1]] 70.65 KiB\n"
          "Times in milliseconds; Self excludes nested events of the same thread; Peak Mem. is "
          "the most a call held at once, Live\n"
          "  Mem. what is still allocated.\n\n"
          "Event                                          Calls  Total  Self   Min.   Max.   "
          "Ave.   Ratio.  Peak Mem.  Live Mem.\n"
          "aten::mkldnn_convolution [[1, 16, 41, 32], …]  4      2.682  2.642  0.233  1.921  "
          "0.67   0.00%   254 KiB    70.7 KiB\n"
          "aten::mkldnn_convolution [[1, 16, 60, 32], …]  4      2.682  2.642  0.233  1.921  "
          "0.67   0.00%   254 KiB    70.7 KiB\n"
          "aten::empty [[1, 144, 1280]]                   4      0.02   0.02   0.004  0.006  "
          "0.005  0.00%   0 B        0 B\n"
          "\n"
          "Warning: 3 GPU kernel(s) were launched with no event open.\n"
          "\n"
          "Why memory grew:\n"
          "  - live memory grew over 24 steps, from 66,241,536 bytes to 66,935,808 bytes at step "
          "ends; still-live blocks allocated\n"
          "    in later and later steps are held by: aten::mkldnn_convolution (694,272 bytes "
          "from 15 steps, 15 tags:\n"
          "    [[1, 16, 41, 32], …] 72,346 bytes, +14 more).\n"
          "\n"
          "Advice:\n"
          "  - varying_shapes: aten::mkldnn_convolution holds 678.00 KiB.\n"
          "    Fix: Bin or pad the inputs to a few sizes.\n"
          "\n"
          "Note: native: peak_bytes is the highest of the live bytes at step marks.\n");
}

}  // namespace
}  // namespace paddle_prof
