// Report::Table(): the text report, laid out like Paddle's profiler report.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "call_durations.h"
#include "number_format.h"
#include "paddle_prof/report.h"
#include "report_builder.h"
#include "row_label.h"
#include "sort_keys.h"
#include "step_phases.h"
#include "text_columns.h"
#include "text_escape.h"

namespace paddle_prof {

namespace {

using internal::EscapeForTable;
using internal::FormatBytes;
using internal::FormatMs;
using internal::PlaceLabel;
using internal::RowLabel;
using internal::ShortPath;

// "; by kind: activation 9.19 MiB (62%), parameter 2.10 MiB (14%)": the categories held
// at the peak, most first, those with none left out; empty without categories.
std::string KindsAtPeak(const std::map<std::string, int64_t>& categories) {
  std::vector<std::pair<int64_t, std::string>> held;
  int64_t total = 0;
  for (const auto& [name, bytes] : categories) {
    if (bytes <= 0) continue;
    held.emplace_back(bytes, name);
    total += bytes;
  }
  if (held.empty()) return "";
  std::stable_sort(held.begin(), held.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = "; by kind:";
  for (size_t i = 0; i < held.size(); ++i) {
    out += (i == 0 ? " " : ", ") + held[i].second + " " + FormatBytes(held[i].first) + " (" +
           internal::FormatFixed(100.0 * static_cast<double>(held[i].first) /
                                     static_cast<double>(total), 0) + "%)";
  }
  return out;
}

}  // namespace

std::string Report::Table(bool detailed, int row_limit) const {
  const size_t shown =
      row_limit > 0 ? std::min(events.size(), static_cast<size_t>(row_limit)) : events.size();
  std::vector<std::string> header = {"Event", "Calls", "Total", "Self", "Min.", "Max.", "Ave."};
  if (detailed) {
    header.push_back("P50");
    header.push_back("P99");
  }
  header.push_back("Ratio.");
  const bool gpu = state == ProfilerState::kCUDA || state == ProfilerState::kAll;
  if (gpu) {
    for (const char* column : {"GPU Total", "GPU Min.", "GPU Max.", "GPU Ave."}) {
      header.push_back(column);
    }
  }
  if (!places.empty()) {
    header.push_back("Peak Mem.");
    header.push_back("Live Mem.");
  }
  // Rows merge over processes: a place of several processes is one set of columns.
  std::vector<std::string> place_names;
  for (const PlaceSummary& p : places) {
    if (std::find(place_names.begin(), place_names.end(), p.place) == place_names.end()) {
      place_names.push_back(p.place);
    }
  }
  if (detailed) {
    for (const std::string& place : place_names) {
      for (const char* column : {" Alloc", " Allocs", " Freed", " Frees"}) {
        header.push_back(place + column);
      }
    }
  }
  std::vector<std::vector<std::string>> cells;
  for (size_t r = 0; r < shown; ++r) {
    const EventRow& row = events[r];
    std::vector<std::string> line = {RowLabel(row), std::to_string(row.calls)};
    for (const double ms : {row.total_ms, row.self_ms, row.min_ms, row.max_ms, row.ave_ms}) {
      line.push_back(row.calls > 0 ? FormatMs(ms) : "-");  // no calls: no fake 0
    }
    if (detailed) {  // a row of a summary written without durations has no percentiles
      const bool known = internal::HasPercentiles(row);
      line.push_back(known ? FormatMs(row.p50_ms) : "-");
      line.push_back(known ? FormatMs(row.p99_ms) : "-");
    }
    line.push_back(internal::FormatFixed(row.ratio * 100, 2) + "%");
    if (gpu) {
      for (const auto& ms : {row.gpu_total_ms, row.gpu_min_ms, row.gpu_max_ms, row.gpu_ave_ms}) {
        line.push_back(row.calls > 0 && ms ? FormatMs(*ms) : "-");
      }
    }
    if (!places.empty()) {
      line.push_back(FormatBytes(internal::SumOverPlaces(row, &MemoryStats::peak_bytes)));
      line.push_back(FormatBytes(internal::SumOverPlaces(row, &MemoryStats::live_bytes)));
    }
    if (detailed) {
      for (const std::string& place : place_names) {
        const auto it = row.memory.find(place);
        const MemoryStats m = it != row.memory.end() ? it->second : MemoryStats{};
        line.push_back(FormatBytes(m.alloc_bytes));
        line.push_back(std::to_string(m.alloc_count));
        line.push_back(FormatBytes(m.free_bytes));
        line.push_back(std::to_string(m.free_count));
      }
    }
    cells.push_back(std::move(line));
  }
  cells.insert(cells.begin(), std::move(header));

  std::string out =
      "\n------------------------->     Profiling Report     <-------------------------\n\n";
  out += "Place: " + ProfilerStateName(state) + "  Total Time: " + FormatMs(wall_ms) +
         "ms  Sorted by " + internal::SortDescription(sorted_by) + " in descending order";
  out += steps.empty() ? "" : "  Steps: " + std::to_string(steps.size());
  if (!merged_from.empty()) {
    out += "  Merged from " + std::to_string(merged_from.size()) + " profiles";
  } else if (!processes.empty()) {
    out += "  Processes: " + std::to_string(processes.size() + 1);
  }
  out += "\n";
  if (throughput && internal::HasPhases(*this)) {
    out += internal::ThroughputLine(*throughput);
  }
  for (const PlaceSummary& p : places) {
    out += "Memory on " + PlaceLabel(p) + ": peak " + FormatBytes(p.peak_bytes) + ", start " +
           FormatBytes(p.start_bytes) + ", end " + FormatBytes(p.end_bytes);
    if (p.untracked_frees > 0) out += ", " + std::to_string(p.untracked_frees) + " untracked frees";
    if (!p.at_peak.empty()) {
      out += "; at the peak held by";
      for (size_t i = 0; i < p.at_peak.size() && i < 3; ++i) {
        const RowBytes& r = p.at_peak[i];
        out += (i == 0 ? " " : ", ") + EscapeForTable(r.path.empty() ? r.name : ShortPath(r.path)) +
               (r.tag ? " " + EscapeForTable(*r.tag) : "") + " " + FormatBytes(r.bytes);
      }
    }
    out += KindsAtPeak(p.categories_at_peak);
    out += "\n";
  }
  out += "Times in milliseconds; Self excludes nested events of the same thread";
  if (gpu)
    out += "; GPU is the time the GPU was busy with what a call launched, nested calls included";
  if (!places.empty()) {
    out += "; Peak Mem. is the most a call held at once, Live Mem. what is still allocated";
  }
  out += ".\n\n";
  out += internal::AlignColumns(cells);
  if (events.empty()) out += "(no events recorded)\n";
  if (const size_t more = events.size() - shown; more > 0) {
    out += "(" + std::to_string(more) + (more == 1 ? " more row, in " : " more rows, all in ") +
           (summary_path.empty() ? "the Report: a row limit of 0 prints every row"
                                 : EscapeForTable(summary_path)) +
           ")\n";
  }
  // Warnings name events too.
  for (const std::string& warning : warnings) out += "Warning: " + EscapeForTable(warning) + "\n";
  return out;
}

}  // namespace paddle_prof
