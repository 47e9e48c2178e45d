// The HTML report's writer: the summary goes into the page intact and cannot end its
// script element early, and every written profile gets its page. (The page's rendering
// is tested in a browser: tests/python/test_html.py.)
#include "html_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "paddle_prof/paddle_prof.h"
#include "test_util.h"

namespace paddle_prof {
namespace {

using testing::RemoveProfileFiles;
using testing::TempPath;

constexpr std::string_view kOpen = "<script type=\"application/json\" id=\"paddle-prof-summary\">";

// The text of the page's summary element.
std::string EmbeddedSummary(const std::string& page) {
  const size_t begin = page.find(kOpen);
  EXPECT_NE(begin, std::string::npos);
  const size_t start = begin + kOpen.size();
  return page.substr(start, page.find("</script>", start) - start);
}

TEST(HtmlReportTest, EverySummaryCharacterSurvivesAndNoneEndsTheScript) {
  const std::string json = R"({"name": "</script><script>alert(1)</script>", "a": "<!--"})";
  const std::string page = internal::HtmlPage(json);
  const std::string embedded = EmbeddedSummary(page);
  EXPECT_EQ(embedded.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(embedded), nlohmann::json::parse(json));
  EXPECT_EQ(page.find("@PADDLE_PROF_SUMMARY@"), std::string::npos);
}

TEST(HtmlReportTest, EveryWrittenProfileGetsItsPage) {
  const std::string path = TempPath("html");
  EnableProfiler(ProfilerState::kCPU);
  { RecordEvent e("</script>"); }
  const Report report = StopProfiler(EventSortingKey::kTotal, path);
  std::ifstream in(path + ".html");
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), internal::HtmlReport(report));
  EXPECT_EQ(nlohmann::json::parse(EmbeddedSummary(file.str())),
            nlohmann::json::parse(report.ToJson()));
  RemoveProfileFiles(path);
}

}  // namespace
}  // namespace paddle_prof
