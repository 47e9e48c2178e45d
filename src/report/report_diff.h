// Two runs compared (paddle_prof.diff, `paddle-prof diff`). Rows match by (name, tag),
// and by thread or process too when both runs are split that way (a process known by its
// rank, else by its place among the merged inputs or the children); rows of one key fold
// as a merge folds them. Time is judged on each row's median call against the other
// run's spread of calls, so that noise is not a regression (on its average call where a
// summary has no call durations), and only where each side has kSpreadCalls calls or
// more; memory is exact.
//
//   ReportDiff d = DiffReports(base, next, 0.10, 0.0);
//   d.regressions;  // rows slower or with more memory, then places with a higher peak
#ifndef PADDLE_PROF_SRC_REPORT_DIFF_H_
#define PADDLE_PROF_SRC_REPORT_DIFF_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// A row's time is judged only where each side has this many calls: fewer give no spread
// to tell noise from a change by (the nearest-rank P90 of under 10 calls is the slowest
// one), and a row of one call measured twice differs by 40% on a quiet machine.
inline constexpr int64_t kSpreadCalls = 10;

// One run's side of a row.
struct DiffSide {
  int64_t calls = 0;
  double total_ms = 0;
  std::optional<double> p50_ms;  // none without call durations
  struct Bytes {
    int64_t peak_bytes = 0;
    int64_t live_bytes = 0;
  };
  std::map<std::string, Bytes> memory;  // by place name
};

struct DiffRow {
  std::string name;
  std::optional<std::string> tag;
  std::optional<int> thread;           // set where both runs have per-thread rows
  std::optional<std::string> process;  // set where both have per-process rows: "rank 1"
  // "new", "gone", "same", or "slower"/"faster" then "more_memory"/"less_memory".
  std::vector<std::string> status;
  // What judged the time: "median", "average" (no call durations), "few_calls" (not
  // judged: a side has fewer than kSpreadCalls calls); none where a side has no calls.
  std::optional<std::string> time_by;
  std::optional<DiffSide> base, next;

  bool Has(const char* s) const;
};

struct DiffPlace {
  std::string place;  // "CPU", or "CPU (rank 1)" in a merged run
  std::optional<int64_t> base_peak_bytes, next_peak_bytes;
  std::string status;  // "new", "gone", "more_memory", "less_memory" or "same"
};

struct ReportDiff {
  double time_threshold = 0;    // relative: 0.1 is 10%
  double memory_threshold = 0;  // relative: 0 is any byte
  // Whether rows match by thread, by process: where both runs are split that way.
  bool by_thread = false, by_process = false;
  std::vector<DiffRow> rows;  // the base's keys in order, then those only the new run has
  std::vector<DiffPlace> places;
  // Indices of rows with a regression (slower, more_memory), then of places (more_memory).
  std::vector<size_t> regressing_rows, regressing_places;
  // Indices of rows that changed: those with a time status (new, gone, slower, faster)
  // first, largest change of total time first, then those with a memory status, largest
  // change of peak first.
  std::vector<size_t> changed;
};

// A side's peak (else live) bytes over its places, none without the side; held at
// INT64_MAX or INT64_MIN where a summary's figures would overflow it.
std::optional<int64_t> SideBytes(const std::optional<DiffSide>& side, bool peak);

// What changed from `base` to `next`, by the thresholds (relative, 0 or more).
ReportDiff DiffReports(const Report& base, const Report& next, double time_threshold,
                       double memory_threshold);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_REPORT_DIFF_H_
