#include "profile_files.h"

#include <glog/logging.h>

#include "atomic_file.h"
#include "chrome_trace.h"
#include "html_report.h"

namespace paddle_prof::internal {

void WriteProfileFiles(const Collection& c, const std::string& path, Report* report) {
  std::string error;
  if (!WriteChromeTrace(c, path, &error)) {
    report->warnings.push_back("cannot write the trace to '" + path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
  const std::string summary_path = path + ".summary.json";
  if (WriteFileAtomically(summary_path, report->ToJson(), &error)) {
    report->summary_path = summary_path;
  } else {
    report->warnings.push_back("cannot write the summary to '" + summary_path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
  // A followed child's files are only its parent's to merge: nobody opens its page.
  if (report->process.role != "main") return;
  // Last, so that the page shows the warnings of the other two files.
  const std::string html_path = path + ".html";
  if (!WriteFileAtomically(html_path, HtmlReport(*report), &error)) {
    report->warnings.push_back("cannot write the HTML report to '" + html_path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
}

}  // namespace paddle_prof::internal
