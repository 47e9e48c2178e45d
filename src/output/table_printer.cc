// Report::Table(): the text report, laid out like Paddle's profiler report.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "call_durations.h"
#include "memory_growth.h"
#include "number_format.h"
#include "paddle_prof/report.h"
#include "report_builder.h"
#include "row_label.h"
#include "sort_keys.h"
#include "step_phases.h"
#include "table_labels.h"
#include "text_columns.h"
#include "text_escape.h"

namespace paddle_prof {

namespace {

using internal::EscapeForTable;
using internal::FormatBytes;
using internal::FormatMs;
using internal::PlaceLabel;
using internal::ShortPath;
using internal::WrapText;

// The table's times and bytes, three or four significant digits: the files keep them
// whole. Times never take an exponent ("0.0233", "147.9"), whole milliseconds from 10 s
// on, six decimals below a microsecond ("0.000015"); bytes in binary units ("254 KiB",
// "70.7 KiB", "1.02 MiB"), whole bytes below 1 KiB.
std::string TableMs(double ms) {
  char buf[64];
  const char* format = ms != 0 && ms < 0.001 ? "%.6f"
                       : ms < 1              ? "%.3g"
                       : ms < 1e4            ? "%.4g"
                                             : "%.0f";
  std::snprintf(buf, sizeof(buf), format, ms);
  return buf;
}

std::string TableBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes < 0 ? -bytes : bytes);
  if (value < 1024) return std::to_string(bytes) + " B";
  size_t unit = 0;
  value /= 1024;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), value >= 100 ? "%s%.0f %s" : value >= 10 ? "%s%.1f %s" : "%s%.2f %s",
                bytes < 0 ? "-" : "", value, kUnits[unit]);
  return buf;
}

// Where a holder at the peak was allocated, shortened as the table's labels are.
std::string HolderText(const RowBytes& r) {
  std::string text = EscapeForTable(r.path.empty() ? r.name : ShortPath(r.path));
  if (r.tag) {
    const std::string tag = internal::TrimShapeTag(internal::TagText(*r.tag));
    if (!tag.empty()) text += " " + tag;
  }
  return text;
}

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

std::string Report::Table(bool detailed, int row_limit, int width) const {
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
    std::vector<std::string> line = {"", std::to_string(row.calls)};  // the label comes last
    for (const double ms : {row.total_ms, row.self_ms, row.min_ms, row.max_ms, row.ave_ms}) {
      line.push_back(row.calls > 0 ? TableMs(ms) : "-");  // no calls: no fake 0
    }
    if (detailed) {  // a row of a summary written without durations has no percentiles
      const bool known = internal::HasPercentiles(row);
      line.push_back(known ? TableMs(row.p50_ms) : "-");
      line.push_back(known ? TableMs(row.p99_ms) : "-");
    }
    line.push_back(internal::FormatFixed(row.ratio * 100, 2) + "%");
    if (gpu) {
      for (const auto& ms : {row.gpu_total_ms, row.gpu_min_ms, row.gpu_max_ms, row.gpu_ave_ms}) {
        line.push_back(row.calls > 0 && ms ? TableMs(*ms) : "-");
      }
    }
    if (!places.empty()) {
      line.push_back(TableBytes(internal::SumOverPlaces(row, &MemoryStats::peak_bytes)));
      line.push_back(TableBytes(internal::SumOverPlaces(row, &MemoryStats::live_bytes)));
    }
    if (detailed) {
      for (const std::string& place : place_names) {
        const auto it = row.memory.find(place);
        const MemoryStats m = it != row.memory.end() ? it->second : MemoryStats{};
        line.push_back(TableBytes(m.alloc_bytes));
        line.push_back(std::to_string(m.alloc_count));
        line.push_back(TableBytes(m.free_bytes));
        line.push_back(std::to_string(m.free_count));
      }
    }
    cells.push_back(std::move(line));
  }
  cells.insert(cells.begin(), std::move(header));
  // The event column takes what the other columns leave of the width, but never less
  // than a name's worth.
  constexpr size_t kLeastLabelWidth = 32;
  size_t label_width = 0;
  if (width > 0) {
    std::vector<size_t> column(cells.front().size());
    for (const auto& line : cells) {
      for (size_t i = 1; i < line.size(); ++i) {
        column[i] = std::max(column[i], internal::TextWidth(line[i]));
      }
    }
    size_t others = 0;
    for (size_t i = 1; i < column.size(); ++i) others += column[i] + 2;
    const size_t total = static_cast<size_t>(width);
    label_width = total > others + kLeastLabelWidth ? total - others : kLeastLabelWidth;
  }
  std::vector<const EventRow*> shown_rows;
  for (size_t r = 0; r < shown; ++r) shown_rows.push_back(&events[r]);
  std::vector<std::string> labels = internal::FitRowLabels(shown_rows, label_width);
  for (size_t r = 0; r < shown; ++r) cells[r + 1][0] = std::move(labels[r]);
  const size_t wrap = width > 0 ? static_cast<size_t>(width) : 0;

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
    std::string line = "Memory on " + PlaceLabel(p) + ": peak " + FormatBytes(p.peak_bytes) +
                       ", start " + FormatBytes(p.start_bytes) + ", end " + FormatBytes(p.end_bytes);
    if (p.untracked_frees > 0) line += ", " + std::to_string(p.untracked_frees) + " untracked frees";
    if (!p.at_peak.empty()) {
      line += "; at the peak held by";
      for (size_t i = 0; i < p.at_peak.size() && i < 3; ++i) {
        line += (i == 0 ? " " : ", ") + HolderText(p.at_peak[i]) + " " +
                FormatBytes(p.at_peak[i].bytes);
      }
    }
    line += KindsAtPeak(p.categories_at_peak);
    out += WrapText(line, wrap, "", "  ");
  }
  std::string legend = "Times in milliseconds; Self excludes nested events of the same thread";
  if (gpu) {
    legend += "; GPU is the time the GPU was busy with what a call launched, nested calls included";
  }
  if (!places.empty()) {
    legend += "; Peak Mem. is the most a call held at once, Live Mem. what is still allocated";
  }
  out += WrapText(legend + ".", wrap, "", "  ") + "\n";
  out += internal::AlignColumns(cells);
  if (events.empty()) out += "(no events recorded)\n";
  if (const size_t more = events.size() - shown; more > 0) {
    out += "(" + std::to_string(more) + (more == 1 ? " more row, in " : " more rows, all in ") +
           (summary_path.empty() ? "the Report: a row limit of 0 prints every row"
                                 : EscapeForTable(summary_path)) +
           ")\n";
  }
  // Warnings name events too. Growth has a section of its own.
  std::vector<const std::string*> growth, other;
  for (const std::string& warning : warnings) {
    (internal::IsGrowthWarning(warning) ? growth : other).push_back(&warning);
  }
  if (!other.empty()) out += "\n";
  for (const std::string* w : other) out += WrapText(EscapeForTable(*w), wrap, "Warning: ", "  ");
  if (!growth.empty()) {
    out += "\nWhy memory grew:\n";
    for (const std::string* g : growth) out += WrapText(EscapeForTable(*g), wrap, "  - ", "    ");
  }
  if (!advice.empty()) {
    out += "\nAdvice:\n";
    for (const Advice& a : advice) {
      out += WrapText(EscapeForTable(a.kind + ": " + a.message), wrap, "  - ", "    ");
      out += WrapText(EscapeForTable("Fix: " + a.fix), wrap, "    ", "    ");
    }
  }
  if (!notes.empty()) out += "\n";
  for (const std::string& note : notes) out += WrapText(EscapeForTable(note), wrap, "Note: ", "  ");
  return out;
}

}  // namespace paddle_prof
