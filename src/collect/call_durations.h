// Percentiles of a row's calls (p10, p50, p90, p99, nearest rank): exact over the
// durations its calls took while the report reads the records (CallDurations), and over
// the counts the summary keeps of them for merges (CallDurationCounts, report.h).
#ifndef PADDLE_PROF_SRC_CALL_DURATIONS_H_
#define PADDLE_PROF_SRC_CALL_DURATIONS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// The percentiles every row has.
constexpr std::array<int, 4> kPercents = {10, 50, 90, 99};

// The nearest rank (1-based) of `percent` among `calls` sorted calls: the first whose
// share of the calls reaches `percent`.
inline int64_t NearestRank(int percent, int64_t calls) {
  const int64_t rank = (percent * calls + 99) / 100;
  return rank < 1 ? 1 : rank;
}

// Every duration a row's calls took, in ticks. A row's first kSpill calls are kept as
// they are; past that, durations under kShortTicks are counted by value in a 16 KiB
// array and only the longer ones kept. A row thus costs at most 16 KiB and 8 bytes per
// call that took kShortTicks or more (a microsecond or two: the program spent far more
// on it), and a window of ten million short scopes adds one increment per call.
class CallDurations {
 public:
  static constexpr uint64_t kShortTicks = 4096;
  static constexpr size_t kSpill = 1024;

  void Add(uint64_t ticks) {
    if (counts_ != nullptr && ticks < kShortTicks) {
      ++(*counts_)[ticks];
      ++counted_;
      return;
    }
    values_.push_back(ticks);
    if (counts_ == nullptr && values_.size() >= kSpill) Spill();
  }
  void Merge(const CallDurations& other);
  int64_t calls() const { return counted_ + static_cast<int64_t>(values_.size()); }
  // The durations at kPercents' nearest ranks; zeros without calls.
  std::array<uint64_t, kPercents.size()> Percentiles() const;
  // The distinct durations in nanoseconds (at `ns_per_tick`), bounded (BoundCounts).
  CallDurationCounts Counts(double ns_per_tick) const;

 private:
  void Spill();

  // counts_[t]: calls that took t ticks, for t < kShortTicks. uint32_t: a row would need
  // four billion calls recorded in one window to overflow it.
  std::unique_ptr<std::array<uint32_t, kShortTicks>> counts_;
  int64_t counted_ = 0;          // calls in counts_
  std::vector<uint64_t> values_;  // every duration until Spill(), then the long ones
};

// Keeps at most CallDurationCounts::kMaxDistinct entries, rounding every duration down
// to fewer significant bits until they fit.
void BoundCounts(CallDurationCounts* counts);
// Adds `from` to `into` (rounded alike first when either was rounded), bounded.
void MergeCounts(const CallDurationCounts& from, CallDurationCounts* into);
// The durations at kPercents' nearest ranks, in ms; zeros without calls.
std::array<double, kPercents.size()> PercentilesMs(const CallDurationCounts& counts);
// Sets the row's p10_ms ... p99_ms, in kPercents' order.
inline void SetPercentiles(const std::array<double, kPercents.size()>& ms, EventRow* row) {
  row->p10_ms = ms[0];
  row->p50_ms = ms[1];
  row->p90_ms = ms[2];
  row->p99_ms = ms[3];
}
// Whether the row's percentiles are known: it has calls and their duration counts (a
// merged row of a summary written before them has none).
inline bool HasPercentiles(const EventRow& row) {
  return row.calls > 0 && !row.durations.ns.empty();
}
// Whether the row's percentiles can be told, as the summary writes them: known, or 0 for
// a row without calls (which has none to lack).
inline bool PercentilesKnown(const EventRow& row) { return row.calls == 0 || HasPercentiles(row); }
// Whether `counts` is ascending, positive and adds up to `calls` calls.
bool CountsAreWhole(const CallDurationCounts& counts, int64_t calls);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CALL_DURATIONS_H_
