// A diff of two runs (report_diff.h) as the package hands it out: its JSON (the shape of
// paddle_prof.Diff.to_dict()), the text the CLI prints, and a self-contained HTML page.
#ifndef PADDLE_PROF_SRC_DIFF_OUTPUTS_H_
#define PADDLE_PROF_SRC_DIFF_OUTPUTS_H_

#include <string>

#include "paddle_prof/report.h"
#include "report_diff.h"

namespace paddle_prof::internal {

// {"time_threshold", "memory_threshold", "rows", "places", "regressions", "changed"}:
// rows, places and the regressions (rows, then places) as objects; `changed` as the
// rows' indices, in ReportDiff::changed's order.
std::string DiffJson(const ReportDiff& diff);

// The changed rows and places as text, with the thresholds and what was not judged.
std::string DiffTable(const ReportDiff& diff);

// The page (src/html/diff.html): the changed rows and places, each place's memory over
// time in both runs overlaid, and the steps of both side by side.
std::string DiffPage(const ReportDiff& diff, const Report& base, const Report& next);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_DIFF_OUTPUTS_H_
