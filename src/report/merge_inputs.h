// How a merged report tells its inputs apart: by rank when every input has its own, else
// by host and pid. Ranks on separate machines may share a pid (every container's first
// process is pid 1), so a pid alone names an input only together with its host.
//
//   InputNames names = NameInputs(inputs);
//   names.labels[1];  // "rank 1", or "node2 pid 1"
#ifndef PADDLE_PROF_SRC_MERGE_INPUTS_H_
#define PADDLE_PROF_SRC_MERGE_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

struct InputNames {
  std::string by;             // "rank" or "process"
  std::vector<int64_t> ids;   // each input's rank, else pid: a spread's argmax, a step's slowest
  // What the merged report's maps by input (a step's wall_ms_by and phases_ms_by, peaks_by)
  // are keyed by: the rank, else the pid, else, where two inputs share a pid, the label.
  std::vector<std::string> keys;
  // "rank 3", or "node2 pid 1" ("pid 1" where the host is unknown); an input that claims
  // the same host and pid as one before it gets " (input N)", N its position from 1.
  std::vector<std::string> labels;
  // One per input that claims the process of one before it (same host and pid, no rank
  // of its own to tell them apart), and one per input of another process that claims the
  // rank of one before it (which makes every input go by host and pid), naming both.
  std::vector<std::string> warnings;
};

// `inputs` named for a merge. Warnings name an input by its summary_path ("input N",
// N from 1, when it has none).
InputNames NameInputs(const std::vector<Report>& inputs);

// The input `i` (from 0) in a merge's errors and warnings: its summary_path, else
// "input N", N = i + 1 as a user counts them.
std::string InputName(const Report& input, size_t i);

// "rank 3", "node2 pid 1", "pid 1": a process as a merged report names it.
std::string ProcessLabel(const ProcessInfo& process, bool by_rank);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_MERGE_INPUTS_H_
