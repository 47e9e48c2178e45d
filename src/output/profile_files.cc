#include "profile_files.h"

#include <glog/logging.h>

#include <exception>
#include <utility>

#include "atomic_file.h"
#include "chrome_trace.h"
#include "html_report.h"
#include "native_guard.h"

namespace paddle_prof::internal {

TraceWriting::TraceWriting(const Collection& c, std::string path)
    : c_(c), path_(std::move(path)) {
  // No thread to spare: Wait() writes it.
  running_ = pthread_create(&thread_, nullptr, &TraceWriting::Run, this) == 0;
}

TraceWriting::~TraceWriting() { Join(); }

void* TraceWriting::Run(void* self) {
  NativeGuard profiler_memory;  // as on the stopping thread: not the program's memory
  static_cast<TraceWriting*>(self)->Write();
  return nullptr;
}

void TraceWriting::Join() {
  if (running_) pthread_join(thread_, nullptr);
  running_ = false;
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
  Join();
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
  const std::string summary_path = path + kSummarySuffix;
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
