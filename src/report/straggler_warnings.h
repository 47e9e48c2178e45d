// The stragglers of a merged report, in words: an op or a step whose slowest input (rank
// or process) takes over 1.5 times the inputs' median and at least 1 ms more.
//   rank 1 is a straggler in slow_op: 120.4 ms there against a median of 20.1 ms over 2 ranks
//   rank 1 is a straggler in 5 of 5 steps (step 0: 70.3 ms outside communication against
//   a median of 20.1 ms over 2 ranks; ...)
// Collective communication is where the others wait for a straggler, so it is never one
// itself: those rows are passed over, and a step counts its time outside them.
#ifndef PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_
#define PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// One warning per straggling op (rows with a spread), the largest excess over the median
// first, at most 10 and then a line counting the rest; then one per input that straggles
// in steps (steps with wall_ms_by), listing up to 5 of them. `work_ms_by` gives, for each
// of `steps`, each input's time outside communication. `by` is "rank" or "process";
// `inputs` how many inputs each row's spread covers.
std::vector<std::string> StragglerWarnings(const std::vector<EventRow>& rows,
                                           const std::vector<StepSummary>& steps,
                                           const std::vector<std::map<int64_t, double>>& work_ms_by,
                                           const std::string& by, size_t inputs);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_
