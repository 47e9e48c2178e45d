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

// An input that straggles: in how many ops and steps, by how much in all (the excess
// over the median, added over its ops, or over its steps when it straggles in steps),
// and its worst case in words ("slow_op: 120.4 ms there against a median of ...").
struct StragglerEvidence {
  std::string input;  // "rank 1", "process 1234"
  size_t ops = 0;
  size_t steps = 0;
  size_t of_steps = 0;
  double behind_ms = 0;
  double worst_ms = 0;
  std::string worst;
};

// One warning per straggling op (rows with a spread), the largest excess over the median
// first, at most 10 and then a line counting the rest; then one per input that straggles
// in steps (steps with wall_ms_by), listing up to 5 of them. `work_ms_by` gives, for each
// of `steps`, each input's time outside communication. `by` is "rank" or "process";
// `inputs` how many inputs each row's spread covers. `evidence` gets one entry per
// straggling input, in rank (or pid) order.
std::vector<std::string> StragglerWarnings(const std::vector<EventRow>& rows,
                                           const std::vector<StepSummary>& steps,
                                           const std::vector<std::map<int64_t, double>>& work_ms_by,
                                           const std::string& by, size_t inputs,
                                           std::vector<StragglerEvidence>* evidence);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_
