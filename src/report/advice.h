// Advice (report.h): what to change about what a window measured. Each kind is given
// only on its evidence and cites the figures that fired it:
//   varying_shapes    live growth held by one op's blocks across 8 or more tags
//   malloc_retention  resident growth of 16 MiB or more, half of it freed but kept by malloc
//   data_bound        the data phase takes 30% or more of step time
//   activation_bound  activations are 50% or more of a place's peak
//   small_ops         half or more of self time in rows whose median call is under 20 µs
//   straggler         a merged report's input behind the others: in steps, when any
//                     input is (an op can be slow only for holding a wait for another)
#ifndef PADDLE_PROF_SRC_ADVICE_H_
#define PADDLE_PROF_SRC_ADVICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "memory_growth.h"
#include "paddle_prof/report.h"
#include "straggler_warnings.h"

namespace paddle_prof::internal {

// varying_shapes and malloc_retention, from the growth a window's records show.
std::vector<Advice> GrowthAdvice(const MemoryGrowth& live, const ProcessGrowth& process);

// data_bound, activation_bound and small_ops, from a report's own figures: a window's or
// a merged one's.
std::vector<Advice> FigureAdvice(const Report& report);

// straggler, for one input of a merged report.
Advice StragglerAdvice(const StragglerEvidence& evidence);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_ADVICE_H_
