// Time in collective communication, step by step: where the ranks of a synchronous job
// wait for one another. Every rank's step lasts as long as the slowest one's, so a
// rank's own work in a step is its wall time less this; a merge finds the straggler by it.
#ifndef PADDLE_PROF_SRC_STEP_COMMUNICATION_H_
#define PADDLE_PROF_SRC_STEP_COMMUNICATION_H_

#include <string_view>
#include <vector>

#include "collection.h"

namespace paddle_prof::internal {

// Whether `name` is collective communication: torch.distributed's c10d ops and the
// gloo/NCCL/MPI/UCC work they launch (which, run on the backend's threads, spans the wait).
bool IsCommunication(std::string_view name);
// Whether a rank's time in `name` may be spent waiting for the others: communication, or
// DistributedDataParallel's own scopes (its forward syncs buffers, its reducer waits).
bool WaitsForCommunication(std::string_view name);

// For each step of `c` (in order), the milliseconds during which at least one thread was
// in a communication call.
std::vector<double> CommunicationMsPerStep(const Collection& c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STEP_COMMUNICATION_H_
