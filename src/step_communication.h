// Time in collective communication, step by step: where the ranks of a synchronous job
// wait for one another. Every rank's step lasts as long as the slowest one's, so a
// rank's own work in a step is its wall time less this; a merge finds the straggler by it.
#ifndef PADDLE_PROF_SRC_STEP_COMMUNICATION_H_
#define PADDLE_PROF_SRC_STEP_COMMUNICATION_H_

#include <string_view>
#include <vector>

#include "collection.h"

namespace paddle_prof::internal {

// Whether `name` is collective communication or waits for it: torch.distributed's c10d
// ops, the gloo/NCCL/MPI/UCC work they launch, DistributedDataParallel's forward (it
// syncs buffers), and ops named for a collective (all_reduce, broadcast, barrier, ...).
bool IsCommunication(std::string_view name);

// For each step of `c` (in order), the milliseconds during which at least one thread was
// in a communication call.
std::vector<double> CommunicationMsPerStep(const Collection& c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_STEP_COMMUNICATION_H_
