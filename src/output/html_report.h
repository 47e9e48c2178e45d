// The HTML report: one self-contained page that draws a summary. The page (HTML, CSS
// and the script that renders, src/html/report.html) is built into the library; the
// summary JSON goes inside it as <script type="application/json"
// id="paddle-prof-summary">, from which the page's script draws everything. The page
// loads nothing from any address, so it opens from file:// anywhere.
#ifndef PADDLE_PROF_SRC_HTML_REPORT_H_
#define PADDLE_PROF_SRC_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// `page` with `json` in place of `mark` (which it holds, inside a JSON script element).
// Every '<' in it is written \u003c, which means the same inside a JSON string (the only
// place JSON has one), so no "</script>" in a name can end the script early.
std::string PageWithJson(std::string_view page, std::string_view mark, std::string_view json);

// The page for a summary JSON text (Report::ToJson(), or a summary read back).
std::string HtmlPage(std::string_view summary_json);

// HtmlPage(report.ToJson()).
std::string HtmlReport(const Report& report);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_HTML_REPORT_H_
