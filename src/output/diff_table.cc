#include <cstdio>
#include <cstdlib>
#include <functional>

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

template <typename T>
std::string Change(const std::optional<T>& base, const std::optional<T>& next,
                   const std::function<std::string(T)>& text) {
  return (base ? text(*base) : "-") + " -> " + (next ? text(*next) : "-");
}

// Both sides, and the exact change: 4 bytes more of 3.91 KiB show.
std::string ChangeBytes(const std::optional<int64_t>& base, const std::optional<int64_t>& next) {
  std::string text = Change<int64_t>(base, next, FormatBytes);
  if (base && next && *next != *base) {
    text += std::string(" (") + (*next > *base ? "+" : "-") +
            std::to_string(std::llabs(*next - *base)) + " B)";
  }
  return text;
}

std::optional<int64_t> Bytes(const std::optional<DiffSide>& side, bool peak) {
  if (!side) return std::nullopt;
  int64_t bytes = 0;
  for (const auto& [place, b] : side->memory) bytes += peak ? b.peak_bytes : b.live_bytes;
  return bytes;
}

std::optional<double> Average(const std::optional<DiffSide>& side) {
  if (!side) return std::nullopt;
  return side->total_ms / static_cast<double>(side->calls);
}

template <typename T, typename F>
std::optional<T> Field(const std::optional<DiffSide>& side, F field) {
  if (!side) return std::nullopt;
  return field(*side);
}

std::string Label(const DiffRow& row) {
  std::string label = row.name + (row.tag ? " [" + *row.tag + "]" : "");
  if (row.process) label = *row.process + "::" + label;
  if (row.thread) label = "thread" + std::to_string(*row.thread) + "::" + label;
  return label;
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
    const std::function<std::string(double)> ms = FormatMs;
    const std::function<std::string(int64_t)> count = [](int64_t n) { return std::to_string(n); };
    for (const size_t i : diff.changed) {
      const DiffRow& row = diff.rows[i];
      std::string status;
      for (const std::string& s : row.status) status += (status.empty() ? "" : ",") + s;
      const auto p50 = [](const DiffSide& s) { return s.p50_ms; };
      const std::string call = row.time_by == "average"
                                   ? "avg " + Change(Average(row.base), Average(row.next), ms)
                                   : Change(row.base ? p50(*row.base) : std::nullopt,
                                            row.next ? p50(*row.next) : std::nullopt, ms);
      cells.push_back(
          {EscapeForTable(Label(row)), status,
           Change(Field<int64_t>(row.base, [](const DiffSide& s) { return s.calls; }),
                  Field<int64_t>(row.next, [](const DiffSide& s) { return s.calls; }), count),
           call,
           Change(Field<double>(row.base, [](const DiffSide& s) { return s.total_ms; }),
                  Field<double>(row.next, [](const DiffSide& s) { return s.total_ms; }), ms),
           ChangeBytes(Bytes(row.base, true), Bytes(row.next, true)),
           ChangeBytes(Bytes(row.base, false), Bytes(row.next, false))});
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
