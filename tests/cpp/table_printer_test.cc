// Report::Table(), the text report, on hand-made reports: escaped names on one line,
// empty rows.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "paddle_prof/report.h"

namespace paddle_prof {
namespace {

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

}  // namespace
}  // namespace paddle_prof
