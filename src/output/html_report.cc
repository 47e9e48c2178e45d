#include "html_report.h"

#include "html_report_template.h"

namespace paddle_prof::internal {

namespace {

// Where the template takes the summary, inside its JSON script element.
constexpr std::string_view kSummaryMark = "@PADDLE_PROF_SUMMARY@";
static_assert(kHtmlReportTemplate.find(kSummaryMark) != std::string_view::npos,
              "src/html/report.html must hold @PADDLE_PROF_SUMMARY@");

}  // namespace

std::string HtmlPage(std::string_view summary_json) {
  const size_t mark = kHtmlReportTemplate.find(kSummaryMark);
  std::string page;
  page.reserve(kHtmlReportTemplate.size() + summary_json.size() + summary_json.size() / 16);
  page.append(kHtmlReportTemplate.substr(0, mark));
  for (const char c : summary_json) {
    if (c == '<') {
      page.append("\\u003c");
    } else {
      page.push_back(c);
    }
  }
  page.append(kHtmlReportTemplate.substr(mark + kSummaryMark.size()));
  return page;
}

std::string HtmlReport(const Report& report) { return HtmlPage(report.ToJson()); }

}  // namespace paddle_prof::internal
