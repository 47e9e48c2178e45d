#include <cstdio>
#include <optional>

#include "diff_outputs.h"
#include "number_format.h"
#include "text_columns.h"
#include "text_escape.h"

namespace paddle_prof::internal {

namespace {

// "10%", "0.5%": a threshold as the options take it.
std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fraction * 100);
  return text;
}

// "base -> new", "-" for a side without the figure.
template <typename T, typename Text>
std::string Change(const std::optional<T>& base, const std::optional<T>& next, Text text) {
  return (base ? text(*base) : "-") + " -> " + (next ? text(*next) : "-");
}

std::string Count(int64_t n) { return std::to_string(n); }

// Both sides, and the exact change: 4 bytes more of 3.91 KiB show.
std::string ChangeBytes(const std::optional<int64_t>& base, const std::optional<int64_t>& next) {
  std::string text = Change(base, next, FormatBytes);
  if (base && next && *next != *base) {
    // Unsigned: the change of two int64 figures may not fit one.
    const uint64_t by = *next > *base ? static_cast<uint64_t>(*next) - static_cast<uint64_t>(*base)
                                      : static_cast<uint64_t>(*base) - static_cast<uint64_t>(*next);
    text += std::string(" (") + (*next > *base ? "+" : "-") + std::to_string(by) + " B)";
  }
  return text;
}

// A side's figure, none without the side.
template <typename F>
auto Of(const std::optional<DiffSide>& side, F figure) -> std::optional<decltype(figure(*side))> {
  if (!side) return std::nullopt;
  return figure(*side);
}

std::string Label(const DiffRow& row) {
  std::string label = row.name + (row.tag ? " [" + *row.tag + "]" : "");
  if (row.process) label = *row.process + "::" + label;
  if (row.thread) label = "thread" + std::to_string(*row.thread) + "::" + label;
  return label;
}

// The P50 column: each side's median call, or where the row is judged by its average
// call (both sides then have kSpreadCalls calls or more), that.
std::string CallColumn(const DiffRow& row) {
  if (row.time_by == "average") {
    const auto average = [](const DiffSide& s) {
      return s.total_ms / static_cast<double>(s.calls);
    };
    return "avg " + Change(Of(row.base, average), Of(row.next, average), FormatMs);
  }
  const auto p50 = [](const DiffSide& s) { return s.p50_ms; };
  return Change(Of(row.base, p50).value_or(std::nullopt), Of(row.next, p50).value_or(std::nullopt),
                FormatMs);
}

}  // namespace

std::string DiffTable(const ReportDiff& diff) {
  std::string out = "Compared with thresholds: time " + Percent(diff.time_threshold) + ", memory " +
                    Percent(diff.memory_threshold) + "\n";
  size_t averaged = 0, few = 0;
  for (const DiffRow& row : diff.rows) {
    averaged += row.time_by == "average";
    few += row.time_by == "few_calls";
  }
  const std::string of = " of " + std::to_string(diff.rows.size()) + " rows";
  if (averaged > 0) {
    out += "Time judged by the average call for " + std::to_string(averaged) + of +
           ": a summary has no call durations (written before them, or edited)\n";
  }
  if (few > 0) {
    out += "Time not judged for " + std::to_string(few) + of + ": fewer than " +
           std::to_string(kSpreadCalls) +
           " calls on a side give no spread to tell noise by (memory is judged on every row)\n";
  }
  std::vector<const DiffPlace*> places;
  for (const DiffPlace& p : diff.places) {
    if (p.status != "same") places.push_back(&p);
  }
  if (diff.changed.empty() && places.empty()) {
    return out + "No changes: every row and place is the same within the thresholds.\n";
  }
  if (!diff.changed.empty()) {
    std::vector<std::vector<std::string>> cells = {
        {"Event", "Status", "Calls", "P50 (ms)", "Total (ms)", "Peak Mem.", "Live Mem."}};
    const auto calls = [](const DiffSide& s) { return s.calls; };
    const auto total = [](const DiffSide& s) { return s.total_ms; };
    for (const size_t i : diff.changed) {
      const DiffRow& row = diff.rows[i];
      std::string status;
      for (const std::string& s : row.status) status += (status.empty() ? "" : ",") + s;
      cells.push_back({EscapeForTable(Label(row)), status,
                       Change(Of(row.base, calls), Of(row.next, calls), Count), CallColumn(row),
                       Change(Of(row.base, total), Of(row.next, total), FormatMs),
                       ChangeBytes(SideBytes(row.base, true), SideBytes(row.next, true)),
                       ChangeBytes(SideBytes(row.base, false), SideBytes(row.next, false))});
    }
    out += "Changed rows: " + std::to_string(diff.changed.size()) + " (time first, then memory)\n";
    out += AlignColumns(cells);
  }
  for (const DiffPlace* p : places) {
    out += "Peak on " + EscapeForTable(p->place) + ": " +
           ChangeBytes(p->base_peak_bytes, p->next_peak_bytes) + " (" + p->status + ")\n";
  }
  return out + "Regressions: " +
         std::to_string(diff.regressing_rows.size() + diff.regressing_places.size()) + "\n";
}

}  // namespace paddle_prof::internal
