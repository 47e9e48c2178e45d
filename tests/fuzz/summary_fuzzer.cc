// Summary JSON of another rank or process (summary_reader.h), as load, merge and html
// use it: it reads as a report or fails with an error naming its source; a report it
// reads prints, merges with another process's, and writes JSON and HTML that read back.
#include <stdexcept>

#include "fuzz_files.h"
#include "html_report.h"
#include "report_merge.h"
#include "summary_reader.h"

using namespace paddle_prof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source = "fuzz.summary.json";
  Report report;
  try {
    report =
        internal::ReportFromJson(std::string(reinterpret_cast<const char*>(data), size), source);
  } catch (const std::invalid_argument& e) {
    fuzz::ExpectNamed(e.what(), source);
    return 0;
  }
  report.Table(true);
  internal::HtmlReport(report);
  internal::ReportFromJson(report.ToJson(), "written back");
  Report other = report;
  other.process.host += "'";  // another process, the same profile
  report.summary_path = source;
  other.summary_path = "other.summary.json";
  try {
    const Report merged = internal::MergeReports({report, other}, EventSortingKey::kTotal);
    merged.Table();
    internal::ReportFromJson(merged.ToJson(), "merged");
  } catch (const std::invalid_argument& e) {  // inputs that do not merge, one or both named
    fuzz::ExpectNamed(e.what(), ".summary.json");
  }
  return 0;
}
