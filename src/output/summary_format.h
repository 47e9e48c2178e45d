// The summary JSON file: what every process writes beside its trace and every reader
// takes (load, merge, html, a parent reading its children). Report::ToJson()
// (summary_json.cc) writes it, ReportFromJson() (summary_reader.h) reads it back; both
// name its version here, so that one edit changes it for both.
#ifndef PADDLE_PROF_SRC_SUMMARY_FORMAT_H_
#define PADDLE_PROF_SRC_SUMMARY_FORMAT_H_

namespace paddle_prof::internal {

inline constexpr int kSummaryVersion = 1;

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SUMMARY_FORMAT_H_
