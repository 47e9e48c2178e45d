#include "profile_files.h"

#include <glog/logging.h>

#include <exception>
#include <system_error>
#include <utility>

#include "atomic_file.h"
#include "chrome_trace.h"
#include "html_report.h"
#include "native_guard.h"

namespace paddle_prof::internal {

TraceWriting::TraceWriting(const Collection& c, std::string path)
    : c_(c), path_(std::move(path)) {
  try {
    thread_ = std::thread([this] {
      NativeGuard profiler_memory;  // as on the stopping thread: not the program's memory
      Write();
    });
  } catch (const std::system_error&) {  // no thread to spare: Wait() writes it
  }
}

TraceWriting::~TraceWriting() {
  if (thread_.joinable()) thread_.join();
}

void TraceWriting::Write() {
  written_ = true;
  try {
    WriteChromeTrace(c_, path_, &error_);
  } catch (const std::exception& e) {  // out of memory, on a thread nobody else catches
    error_ = e.what();
  }
}

const std::string& TraceWriting::Wait() {
  if (thread_.joinable()) thread_.join();
  if (!written_) Write();
  return error_;
}

void WriteProfileFiles(TraceWriting* trace, Report* report) {
  const std::string& path = trace->path();
  if (const std::string& error = trace->Wait(); !error.empty()) {
    report->warnings.push_back("cannot write the trace to '" + path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
  std::string error;
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
