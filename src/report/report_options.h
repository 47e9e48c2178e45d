// How a stopped window is reported: passed explicitly from each caller (the C++ API,
// the Python bindings, the implicit profiler) to the report builder and the writers.
#ifndef PADDLE_PROF_SRC_REPORT_OPTIONS_H_
#define PADDLE_PROF_SRC_REPORT_OPTIONS_H_

#include <optional>
#include <string>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

struct ReportOptions {
  EventSortingKey key = EventSortingKey::kTotal;
  bool per_thread = false;   // one row per thread and event
  bool per_process = false;  // one row per process and event, children merged
  std::string profile_path;  // the trace, and the summary beside it; none when empty
  int row_limit = Report::kDefaultRowLimit;  // of the table printed, if one is (0: all)
  std::optional<int> cycle;                  // the schedule's cycle this window is
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_REPORT_OPTIONS_H_
