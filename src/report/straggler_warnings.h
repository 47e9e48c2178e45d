// The stragglers of a merged report, in words: an op or a step whose slowest input (rank
// or process) takes over 1.5 times the inputs' median and at least 1 ms more, and an input
// whose peak on a place kind is over 1.1 times the inputs' median and at least 64 MiB more.
//   rank 1 is a straggler in slow_op: 120.4 ms there against a median of 20.1 ms over 2 ranks
//   rank 1 is a straggler in 5 of 5 steps (step 0: 70.3 ms outside communication against
//   a median of 20.1 ms over 2 ranks; ...)
//   rank 1 is a memory straggler on CPU: peak 612.0 MiB against a median of 480.5 MiB
//   over 4 ranks
// Collective communication is where the others wait for a straggler, so it is never one
// itself: those rows are passed over, and a step counts its time outside them.
#ifndef PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_
#define PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "merge_inputs.h"
#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// An input that straggles: in how many ops and steps, by how much in all (the excess
// over the median, added over its ops, or over its steps when it straggles in steps),
// and its worst case in words ("slow_op: 120.4 ms there against a median of ...").
struct StragglerEvidence {
  std::string input;  // "rank 1", "node2 pid 1234"
  size_t ops = 0;
  size_t steps = 0;
  size_t of_steps = 0;
  double behind_ms = 0;
  double worst_ms = 0;
  std::string worst;
};

// The lower middle value, as a merge's medians are: with two inputs, the smaller.
template <typename T>
T LowerMedian(std::vector<T> values) {
  std::nth_element(values.begin(), values.begin() + (values.size() - 1) / 2, values.end());
  return values[(values.size() - 1) / 2];
}

// A merged step, by input (its index among the merge's inputs): the slowest, and each
// one's time outside communication.
struct StepWork {
  size_t slowest = 0;
  std::map<size_t, double> ms;
};

// One warning per straggling op (rows with a spread; `row_slowest[i]` is the input of
// rows[i]'s largest total), the largest excess over the median first, at most 10 and then
// a line counting the rest; then one per input that straggles in steps (`work[i]` for
// steps[i]), listing up to 5 of them. Inputs are named by `names`. `evidence` gets one
// entry per straggling input, in input order.
std::vector<std::string> StragglerWarnings(const std::vector<EventRow>& rows,
                                           const std::vector<size_t>& row_slowest,
                                           const std::vector<StepSummary>& steps,
                                           const std::vector<StepWork>& work,
                                           const InputNames& names,
                                           std::vector<StragglerEvidence>* evidence);

// One warning per input and place kind of `peaks_by` (a merged report's) where the
// input's peak is a memory straggler's, by place kind, then in input order.
std::vector<std::string> MemoryStragglerWarnings(
    const std::map<std::string, std::map<std::string, int64_t>>& peaks_by,
    const InputNames& names);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STRAGGLER_WARNINGS_H_
