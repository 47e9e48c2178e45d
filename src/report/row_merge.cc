#include "row_merge.h"

#include <algorithm>

#include "call_durations.h"
#include "memory_figures.h"
#include "report_builder.h"

namespace paddle_prof::internal {

namespace {

// A row with no calls ([no event]) has times 0 that are no call's: they bound nothing.
void MergeExtremes(bool into_counts, bool from_counts, double from_min, double from_max,
                   double* into_min, double* into_max) {
  if (!from_counts) return;
  *into_min = into_counts ? std::min(*into_min, from_min) : from_min;
  *into_max = into_counts ? std::max(*into_max, from_max) : from_max;
}

void MergeGpu(const EventRow& from, EventRow* into) {
  if (!from.gpu_total_ms) return;
  const bool into_counts = into->calls > 0 && into->gpu_total_ms.has_value();
  double min = into->gpu_min_ms.value_or(0);
  double max = into->gpu_max_ms.value_or(0);
  MergeExtremes(into_counts, from.calls > 0, from.gpu_min_ms.value_or(0),
                from.gpu_max_ms.value_or(0), &min, &max);
  into->gpu_min_ms = min;
  into->gpu_max_ms = max;
  into->gpu_total_ms = into->gpu_total_ms.value_or(0) + *from.gpu_total_ms;
}

// Each input keeps its top sources only; the merged row keeps every frame they name until
// FinishMergedRows() keeps the most calls among them.
void MergeSources(const std::vector<SourceCalls>& from, std::vector<SourceCalls>* into) {
  for (const SourceCalls& s : from) {
    const auto same = std::find_if(into->begin(), into->end(),
                                   [&s](const SourceCalls& i) { return i.frame == s.frame; });
    if (same != into->end()) {
      same->calls += s.calls;
    } else {
      into->push_back(s);
    }
  }
}

// A merged row's percentiles are over all its calls, from the rows' duration counts;
// a row read from a summary without them (written before they were) leaves the merged
// row without percentiles.
void MergeDurations(const EventRow& from, EventRow* into) {
  if (from.calls == 0) return;
  if (!CountsAreWhole(from.durations, from.calls) ||
      (into->calls > 0 && !CountsAreWhole(into->durations, into->calls))) {
    into->durations = {};
    SetPercentiles({}, into);
    return;
  }
  MergeCounts(from.durations, &into->durations);
  auto at = PercentilesMs(into->durations);
  // Within the merged extremes: rounded counts may fall a hair below the shortest call.
  const double min = into->calls > 0 ? std::min(into->min_ms, from.min_ms) : from.min_ms;
  const double max = into->calls > 0 ? std::max(into->max_ms, from.max_ms) : from.max_ms;
  for (double& ms : at) ms = std::clamp(ms, min, max);
  SetPercentiles(at, into);
}

}  // namespace

size_t RowMerger::Add(const EventRow& row) {
  const auto [it, fresh] =
      index_.emplace(Key{row.name, row.tag, row.thread, row.process}, rows_.size());
  if (fresh) {
    rows_.push_back(row);
    return it->second;
  }
  EventRow& into = rows_[it->second];
  MergeDurations(row, &into);  // before calls change: it checks the counts against them
  MergeExtremes(into.calls > 0, row.calls > 0, row.min_ms, row.max_ms, &into.min_ms, &into.max_ms);
  MergeGpu(row, &into);  // before calls change: it asks whether `into` had any
  into.calls += row.calls;
  into.total_ms += row.total_ms;
  into.self_ms += row.self_ms;
  for (const auto& [place, stats] : row.memory) AddUp(&into.memory[place], stats);
  MergeSources(row.sources, &into.sources);
  return it->second;
}

void FinishMergedRows(EventSortingKey key, std::vector<EventRow>* rows) {
  double self_sum = 0;
  for (EventRow& row : *rows) {
    const double calls = static_cast<double>(row.calls);
    row.ave_ms = row.calls > 0 ? std::clamp(row.total_ms / calls, row.min_ms, row.max_ms) : 0;
    if (row.gpu_total_ms) {
      row.gpu_ave_ms = row.calls > 0
                           ? std::clamp(*row.gpu_total_ms / calls, *row.gpu_min_ms, *row.gpu_max_ms)
                           : 0;
    }
    self_sum += row.self_ms;
    std::stable_sort(row.sources.begin(), row.sources.end(),
                     [](const SourceCalls& a, const SourceCalls& b) { return a.calls > b.calls; });
    if (row.sources.size() > EventRow::kMaxSources) row.sources.resize(EventRow::kMaxSources);
  }
  for (EventRow& row : *rows) row.ratio = self_sum > 0 ? row.self_ms / self_sum : 0;
  SortRows(key, rows);
}

}  // namespace paddle_prof::internal
