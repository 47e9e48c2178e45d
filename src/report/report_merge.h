// Reports of several processes as one: paddle_prof.merge() over ranks or processes, and a
// parent's stop folding in the reports its exited children wrote.
//
//   std::vector<Report> ranks = {LoadSummary("rank0.json.summary.json"),
//                                LoadSummary("rank1.json.summary.json")};
//   Report merged = MergeReports(ranks, EventSortingKey::kTotal);
//   merged.events[0].spread->argmax;  // the slowest rank in the top row
#ifndef PADDLE_PROF_SRC_REPORT_MERGE_H_
#define PADDLE_PROF_SRC_REPORT_MERGE_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "paddle_prof/report.h"
#include "row_merge.h"

namespace paddle_prof::internal {

// paddle_prof.merge(): profiles of several processes or ranks as one report, folded in
// one input at a time, so that only the merged rows and the rest of each input (its
// places, steps, timelines: not its rows) are held at once.
//
// Add() throws std::invalid_argument for two summary_paths that name one file (the same
// spelling, or two: ./a.json, a symlink), or for an input whose calls, bytes and counts
// add up past 2^63 with the ones before it, naming it (by summary_path when set, else
// "input N", N from 1); Finish() for no input at all, or for an input
// that is the child of another already merged into it. Inputs go by rank, else by host
// and pid (merge_inputs.h): two that claim one process are kept apart, with a warning.
// Each input's places gain its label (PlaceSummary::input), their timelines keyed by
// PlaceLabel() and shifted onto the merged clock (the earliest input's start on rank 0's
// clock); peaks_by gets each input's peak per place kind, and the warnings its stragglers
// in time and in memory.
class ReportMerger {
 public:
  void Add(Report input);  // in input order
  Report Finish(EventSortingKey key);  // once: the merger is spent

 private:
  uint64_t figures_ = 0;                 // what AddFigures() has added up so far
  std::map<std::string, size_t> paths_;  // the inputs' summary paths
  std::map<std::pair<dev_t, ino_t>, size_t> files_;  // and the files they name
  RowMerger rows_;
  std::vector<std::vector<double>> total_ms_;  // by merged row, then input (0 past its last)
  std::vector<Report> inputs_;                 // without their rows
};

// A ReportMerger's merge of `inputs`.
Report MergeReports(const std::vector<Report>& inputs, EventSortingKey key);

// A parent's stop: its exited children's reports merged into its own. Rows merge across
// processes as across threads (no spread); with per_process every row (the parent's
// too) is keyed and labelled by process (EventRow::process = pid); places of every
// process gain PlaceSummary::process (the parent's too, once there is a child), their
// timelines keyed by PlaceLabel() and the children's shifted onto the parent's clock;
// parent->processes gains one ChildProcess per child (pid, role, worker_id from the
// child's report.process, calls = sum of the child's row calls, wall_ms, summary_path);
// the children's warnings come over prefixed "pid N: "; ratios are recomputed and rows
// re-sorted by parent->sorted_by. Steps, wall_ms, process and clock stay the parent's.
// A child whose calls, bytes and counts add up past 2^63 with those before it is left
// out, with a warning.
void MergeChildren(Report* parent, const std::vector<Report>& children, bool per_process);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_REPORT_MERGE_H_
