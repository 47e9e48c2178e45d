// Summary files read back: the Report a summary JSON (summary_format.h) holds, every
// field the writer (summary_json.cc) writes. paddle_prof.load(), merges, and a parent reading the
// summaries its children wrote all read through this.
#ifndef PADDLE_PROF_SRC_SUMMARY_READER_H_
#define PADDLE_PROF_SRC_SUMMARY_READER_H_

#include <string>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// The report of summary JSON `text`; std::invalid_argument, naming `source`, for text
// that is not a paddle_prof summary or is one of another version.
Report ReportFromJson(const std::string& text, const std::string& source);
// The report of the summary file at `path` (summary_path set to it); std::invalid_argument
// naming the file when it cannot be read or is not a summary.
Report LoadSummary(const std::string& path);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SUMMARY_READER_H_
