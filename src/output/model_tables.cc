// Report::ModuleTable() and Report::PhaseTable(): the model's view of a report as text.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "number_format.h"
#include "paddle_prof/report.h"
#include "step_phases.h"
#include "text_columns.h"
#include "text_escape.h"

namespace paddle_prof {
namespace {

using internal::FormatBytes;
using internal::FormatMs;

int64_t SumOverPlaces(const ModuleSummary& m, int64_t ModuleMemory::*field) {
  int64_t sum = 0;
  for (const auto& [place, memory] : m.memory) sum += memory.*field;
  return sum;
}

// The path without its parent's: "fc1" for "Net.block.fc1" under "Net.block".
std::string ShortName(const std::string& path, const std::string& parent) {
  return path.substr(parent.size() + 1);
}

}  // namespace

std::string Report::ModuleTable() const {
  if (modules.empty()) return "(no modules recorded)\n";
  // Children under their parent, each level in order of first call.
  std::map<std::string, std::vector<const ModuleSummary*>> children;
  std::vector<const ModuleSummary*> roots;
  std::map<std::string, const ModuleSummary*> by_path;
  for (const ModuleSummary& m : modules) by_path[m.path] = &m;
  const auto parent_of = [&by_path](const std::string& path) -> std::string {
    for (size_t dot = path.rfind('.'); dot != std::string::npos && dot > 0;
         dot = path.rfind('.', dot - 1)) {
      if (by_path.count(path.substr(0, dot)) > 0) return path.substr(0, dot);
    }
    return "";
  };
  for (const ModuleSummary& m : modules) {
    const std::string parent = parent_of(m.path);
    (parent.empty() ? roots : children[parent]).push_back(&m);
  }
  std::vector<std::vector<std::string>> lines = {
      {"Module", "Type", "Calls", "Forward", "Backward", "Params", "Peak Mem.", "Activations"}};
  struct Pending {
    const ModuleSummary* module;
    int indent;
    const std::string* parent;  // its path, or null for a root
  };
  std::vector<Pending> pending;  // depth-first
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) pending.push_back({*it, 0, nullptr});
  while (!pending.empty()) {
    const auto [m, indent, parent] = pending.back();
    pending.pop_back();
    lines.push_back({std::string(2 * indent, ' ') +
                         internal::EscapeForTable(parent ? ShortName(m->path, *parent) : m->path),
                     internal::EscapeForTable(m->type), std::to_string(m->calls),
                     FormatMs(m->forward_ms), FormatMs(m->backward_ms),
                     internal::FormatGrouped(static_cast<double>(m->params), 0),
                     FormatBytes(SumOverPlaces(*m, &ModuleMemory::peak_bytes)),
                     FormatBytes(SumOverPlaces(*m, &ModuleMemory::activation_bytes))});
    const auto kids = children.find(m->path);
    if (kids == children.end()) continue;
    for (auto it = kids->second.rbegin(); it != kids->second.rend(); ++it) {
      pending.push_back({*it, indent + 1, &m->path});
    }
  }
  return "Modules (times in milliseconds; Peak Mem. and Activations over the forward "
         "calls):\n" +
         internal::AlignColumns(lines);
}

std::string Report::PhaseTable() const {
  if (steps.empty()) return "(no steps recorded: mark each with mark_step() or prof.step())\n";
  struct Column {
    const char* name;
    double StepPhases::*field;
  };
  const Column phases[] = {{"Dataloader", &StepPhases::data},
                           {"Forward", &StepPhases::forward},
                           {"Backward", &StepPhases::backward},
                           {"Optimization", &StepPhases::optimizer},
                           {"Other", &StepPhases::other}};
  double wall = 0;
  for (const StepSummary& step : steps) wall += step.wall_ms;
  std::vector<std::vector<std::string>> lines = {
      {"Phase", "Calls", "Total", "Avg", "Max", "Min", "Ratio"}};
  for (const Column& phase : phases) {
    int64_t calls = 0;
    double total = 0, most = 0, least = 0;
    for (const StepSummary& step : steps) {
      const double ms = step.phases_ms.*phase.field;
      if (ms <= 0) continue;
      least = calls == 0 ? ms : std::min(least, ms);
      most = std::max(most, ms);
      total += ms;
      ++calls;
    }
    if (calls == 0) {
      lines.push_back({phase.name, "0", "0", "-", "-", "-", "0.00%"});
      continue;
    }
    lines.push_back({phase.name, std::to_string(calls), FormatMs(total),
                     FormatMs(total / static_cast<double>(calls)), FormatMs(most), FormatMs(least),
                     internal::FormatFixed(wall > 0 ? 100 * total / wall : 0, 2) + "%"});
  }
  std::string out = "Model summary over " + std::to_string(steps.size()) + " steps (" +
                    FormatMs(wall) + " ms; times in milliseconds)\n";
  if (throughput) {
    out += internal::ThroughputLine(*throughput);
  }
  return out + internal::AlignColumns(lines);
}

}  // namespace paddle_prof
