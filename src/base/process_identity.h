// Who this process is, for reports of many processes: its pid and host, its rank in a
// distributed job (RANK and WORLD_SIZE, as torchrun sets them, or PADDLE_TRAINER_ID and
// PADDLE_TRAINERS_NUM, as PaddlePaddle's launcher does; torch.distributed's
// own, when the Python profiler finds it initialised), and the wall clock that lines its
// windows up with other processes'.
#ifndef PADDLE_PROF_SRC_PROCESS_IDENTITY_H_
#define PADDLE_PROF_SRC_PROCESS_IDENTITY_H_

#include <cstdint>
#include <string>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// pid, host and role "main"; rank and world size from RANK and WORLD_SIZE when both are
// integers, else from PADDLE_TRAINER_ID and PADDLE_TRAINERS_NUM, else none.
ProcessInfo ThisProcess();
// CLOCK_REALTIME in nanoseconds.
int64_t RealtimeNs();
// `path` with {rank}, {pid} and {host} filled in from `process` ({rank} is 0 without a
// rank); other braces are left as they are.
std::string ExpandPathFields(const std::string& path, const ProcessInfo& process);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROCESS_IDENTITY_H_
