#include "report_diff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "call_durations.h"
#include "row_merge.h"

namespace paddle_prof::internal {

namespace {

// How a run names its processes so that the other run would know the same one: by rank,
// else by its place among the merged inputs (from 1, as the merge counts them), else as
// the main process, a DataLoader worker or a child (from 0).
struct ProcessNames {
  std::map<int64_t, std::string> by_pid;
  std::map<std::string, std::string> by_label;  // a merged input's ("node2 pid 1")

  explicit ProcessNames(const Report& report) {
    for (size_t i = 0; i < report.merged_from.size(); ++i) {
      const MergedInput& input = report.merged_from[i];
      const std::string name = input.process.rank ? "rank " + std::to_string(*input.process.rank)
                                                  : "input " + std::to_string(i + 1);
      by_pid[input.process.pid] = name;
      if (!input.label.empty()) by_label[input.label] = name;
    }
    by_pid.emplace(report.process.pid, report.process.rank
                                           ? "rank " + std::to_string(*report.process.rank)
                                           : "main process");
    int children = 0;
    for (const ChildProcess& child : report.processes) {
      if (child.role == "worker" && child.worker_id) {
        by_pid.emplace(child.pid, "worker " + std::to_string(*child.worker_id));
      } else {
        by_pid.emplace(child.pid, "child " + std::to_string(children++));
      }
    }
  }

  std::string Of(int64_t pid) const {
    const auto it = by_pid.find(pid);
    return it != by_pid.end() ? it->second : "pid " + std::to_string(pid);
  }
};

using RowKey = std::tuple<std::string, std::optional<std::string>, std::optional<int>,
                          std::optional<std::string>>;

// Rows of one key in the order their keys first came; each key's rows folded as a merge
// folds rows of several processes (calls and times add up, a place's peak is the largest,
// percentiles are over all the calls).
struct KeyedRows {
  std::vector<RowKey> keys;
  std::map<RowKey, EventRow> rows;
};

KeyedRows KeyRows(const Report& report, bool by_thread, bool by_process) {
  const ProcessNames names(report);
  std::map<RowKey, RowMerger> merging;
  KeyedRows keyed;
  for (const EventRow& row : report.events) {
    std::optional<std::string> process;
    if (by_process && row.process) process = names.Of(*row.process);
    RowKey key(row.name, row.tag, by_thread ? row.thread : std::nullopt, process);
    EventRow keyless = row;
    keyless.thread.reset();
    keyless.process.reset();
    auto [it, first] = merging.try_emplace(key);
    if (first) keyed.keys.push_back(key);
    it->second.Add(keyless);
  }
  for (auto& [key, merger] : merging) keyed.rows.emplace(key, std::move(merger.rows().front()));
  return keyed;
}

bool Split(const Report& report, bool thread) {
  return std::any_of(report.events.begin(), report.events.end(), [thread](const EventRow& r) {
    return thread ? r.thread.has_value() : r.process.has_value();
  });
}

DiffSide SideOf(const EventRow& row) {
  DiffSide side;
  side.calls = row.calls;
  side.total_ms = row.total_ms;
  if (PercentilesKnown(row)) side.p50_ms = row.p50_ms;
  for (const auto& [place, stats] : row.memory) {
    side.memory[place] = {stats.peak_bytes, stats.live_bytes};
  }
  return side;
}

// In 128 bits: a summary's figures may be anywhere in int64's range.
bool Grew(int64_t base, int64_t next, double threshold) {
  const __int128 growth = static_cast<__int128>(next) - base;
  return next > base && static_cast<double>(growth) > threshold * static_cast<double>(base);
}

void AddOnce(std::vector<std::string>* statuses, const char* status) {
  if (std::find(statuses->begin(), statuses->end(), status) == statuses->end()) {
    statuses->push_back(status);
  }
}

// more_memory / less_memory where a place's peak or live bytes moved past the threshold.
void MemoryStatuses(const EventRow& base, const EventRow& next, double threshold,
                    std::vector<std::string>* statuses) {
  std::map<std::string, std::pair<MemoryStats, MemoryStats>> places;
  for (const auto& [place, stats] : base.memory) places[place].first = stats;
  for (const auto& [place, stats] : next.memory) places[place].second = stats;
  for (const bool peak : {true, false}) {
    for (const auto& [place, both] : places) {
      const int64_t b = peak ? both.first.peak_bytes : both.first.live_bytes;
      const int64_t n = peak ? both.second.peak_bytes : both.second.live_bytes;
      if (Grew(b, n, threshold)) AddOnce(statuses, "more_memory");
      if (Grew(n, b, threshold)) AddOnce(statuses, "less_memory");
    }
  }
}

// The row's time status into `statuses`, and what judged it.
std::optional<std::string> TimeStatus(const EventRow& base, const EventRow& next, double threshold,
                                      std::vector<std::string>* statuses) {
  if (base.calls == 0 || next.calls == 0) return std::nullopt;
  if (std::min(base.calls, next.calls) < kSpreadCalls) return "few_calls";
  if (!HasPercentiles(base) || !HasPercentiles(next)) {
    // A summary without call durations (written before them, or edited) has no
    // percentiles: the average call is judged, with no spread to tell noise by.
    const double b = base.total_ms / static_cast<double>(base.calls);
    const double n = next.total_ms / static_cast<double>(next.calls);
    if (n > b * (1 + threshold)) statuses->push_back("slower");
    if (n < b * (1 - threshold)) statuses->push_back("faster");
    return "average";
  }
  if (next.p50_ms > base.p50_ms * (1 + threshold) && next.p50_ms > base.p90_ms) {
    statuses->push_back("slower");
  } else if (next.p50_ms < base.p50_ms * (1 - threshold) && next.p50_ms < base.p10_ms) {
    statuses->push_back("faster");
  }
  return "median";
}

// Each place's peak by its key: its name, and in a merged run the process it is of.
std::vector<std::pair<std::string, int64_t>> PlacePeaks(const Report& report) {
  const ProcessNames names(report);
  std::vector<std::pair<std::string, int64_t>> peaks;
  for (const PlaceSummary& p : report.places) {
    std::string key = p.place;
    if (p.process) {
      const auto labelled = p.input.empty() ? names.by_label.end() : names.by_label.find(p.input);
      key +=
          " (" + (labelled != names.by_label.end() ? labelled->second : names.Of(*p.process)) + ")";
    }
    const auto same = std::find_if(peaks.begin(), peaks.end(),
                                   [&key](const auto& peak) { return peak.first == key; });
    if (same != peaks.end()) {
      same->second = p.peak_bytes;
    } else {
      peaks.emplace_back(key, p.peak_bytes);
    }
  }
  return peaks;
}

double TotalMs(const std::optional<DiffSide>& side) { return side ? side->total_ms : 0; }

double PeakBytes(const std::optional<DiffSide>& side) {
  return static_cast<double>(SideBytes(side, true).value_or(0));
}

std::vector<size_t> ChangedRows(const std::vector<DiffRow>& rows) {
  std::vector<size_t> timed, memory;
  for (size_t i = 0; i < rows.size(); ++i) {
    const DiffRow& r = rows[i];
    if (r.Has("new") || r.Has("gone") || r.Has("slower") || r.Has("faster")) {
      timed.push_back(i);
    } else if (!r.Has("same")) {
      memory.push_back(i);
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [&rows](size_t a, size_t b) {
    return std::abs(TotalMs(rows[a].next) - TotalMs(rows[a].base)) >
           std::abs(TotalMs(rows[b].next) - TotalMs(rows[b].base));
  });
  std::stable_sort(memory.begin(), memory.end(), [&rows](size_t a, size_t b) {
    return std::abs(PeakBytes(rows[a].next) - PeakBytes(rows[a].base)) >
           std::abs(PeakBytes(rows[b].next) - PeakBytes(rows[b].base));
  });
  timed.insert(timed.end(), memory.begin(), memory.end());
  return timed;
}

}  // namespace

std::optional<int64_t> SideBytes(const std::optional<DiffSide>& side, bool peak) {
  if (!side) return std::nullopt;
  int64_t bytes = 0;
  for (const auto& [place, b] : side->memory) {
    const int64_t add = peak ? b.peak_bytes : b.live_bytes;
    if (__builtin_add_overflow(bytes, add, &bytes)) {
      return add > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
  }
  return bytes;
}

bool DiffRow::Has(const char* s) const {
  return std::find(status.begin(), status.end(), s) != status.end();
}

ReportDiff DiffReports(const Report& base, const Report& next, double time_threshold,
                       double memory_threshold) {
  ReportDiff d;
  d.time_threshold = time_threshold;
  d.memory_threshold = memory_threshold;
  d.by_thread = Split(base, true) && Split(next, true);
  d.by_process = Split(base, false) && Split(next, false);
  const KeyedRows before = KeyRows(base, d.by_thread, d.by_process);
  const KeyedRows after = KeyRows(next, d.by_thread, d.by_process);
  std::vector<RowKey> keys = before.keys;
  for (const RowKey& key : after.keys) {
    if (!before.rows.count(key)) keys.push_back(key);
  }
  for (const RowKey& key : keys) {
    DiffRow row;
    std::tie(row.name, row.tag, row.thread, row.process) = key;
    const auto b = before.rows.find(key);
    const auto n = after.rows.find(key);
    if (b == before.rows.end()) {
      row.status = {"new"};
    } else if (n == after.rows.end()) {
      row.status = {"gone"};
    } else {
      row.time_by = TimeStatus(b->second, n->second, time_threshold, &row.status);
      MemoryStatuses(b->second, n->second, memory_threshold, &row.status);
      if (row.status.empty()) row.status = {"same"};
    }
    if (b != before.rows.end()) row.base = SideOf(b->second);
    if (n != after.rows.end()) row.next = SideOf(n->second);
    d.rows.push_back(std::move(row));
  }
  const auto base_peaks = PlacePeaks(base);
  const auto next_peaks = PlacePeaks(next);
  auto peak_of = [](const auto& peaks, const std::string& key) -> std::optional<int64_t> {
    for (const auto& [place, bytes] : peaks) {
      if (place == key) return bytes;
    }
    return std::nullopt;
  };
  std::vector<std::string> places;
  for (const auto& [place, bytes] : base_peaks) places.push_back(place);
  for (const auto& [place, bytes] : next_peaks) {
    if (!peak_of(base_peaks, place)) places.push_back(place);
  }
  for (const std::string& place : places) {
    DiffPlace p{place, peak_of(base_peaks, place), peak_of(next_peaks, place), "same"};
    if (!p.base_peak_bytes || !p.next_peak_bytes) {
      p.status = p.base_peak_bytes ? "gone" : "new";
    } else if (Grew(*p.base_peak_bytes, *p.next_peak_bytes, memory_threshold)) {
      p.status = "more_memory";
    } else if (Grew(*p.next_peak_bytes, *p.base_peak_bytes, memory_threshold)) {
      p.status = "less_memory";
    }
    d.places.push_back(std::move(p));
  }
  for (size_t i = 0; i < d.rows.size(); ++i) {
    if (d.rows[i].Has("slower") || d.rows[i].Has("more_memory")) d.regressing_rows.push_back(i);
  }
  for (size_t i = 0; i < d.places.size(); ++i) {
    if (d.places[i].status == "more_memory") d.regressing_places.push_back(i);
  }
  d.changed = ChangedRows(d.rows);
  return d;
}

}  // namespace paddle_prof::internal
