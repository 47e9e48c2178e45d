#include "html_report.h"

#include "report_page_template.h"

namespace paddle_prof::internal {

namespace {

// Where the template takes the summary, inside its JSON script element.
constexpr std::string_view kSummaryMark = "@PADDLE_PROF_SUMMARY@";
static_assert(kReportPageTemplate.find(kSummaryMark) != std::string_view::npos,
              "src/html/report.html must hold @PADDLE_PROF_SUMMARY@");

}  // namespace

std::string PageWithJson(std::string_view page, std::string_view mark, std::string_view json) {
  const size_t at = page.find(mark);
  std::string out;
  out.reserve(page.size() + json.size() + json.size() / 16);
  out.append(page.substr(0, at));
  for (const char c : json) {
    if (c == '<') {
      out.append("\\u003c");
    } else {
      out.push_back(c);
    }
  }
  out.append(page.substr(at + mark.size()));
  return out;
}

std::string HtmlPage(std::string_view summary_json) {
  return PageWithJson(kReportPageTemplate, kSummaryMark, summary_json);
}

std::string HtmlReport(const Report& report) { return HtmlPage(report.ToJson()); }

}  // namespace paddle_prof::internal
