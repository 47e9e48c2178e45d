#include "straggler_warnings.h"

#include <algorithm>
#include <map>

#include "number_format.h"
#include "row_label.h"
#include "step_communication.h"

namespace paddle_prof::internal {

namespace {

constexpr size_t kOpsListed = 10;
constexpr size_t kStepsListed = 5;

bool IsStraggler(double max_ms, double median_ms) {
  return max_ms > 1.5 * median_ms && max_ms - median_ms >= 1.0;
}

// Over 10% and at least 64 MiB above the median: a rank that runs out of memory first,
// not the noise of allocator rounding among ranks of a large model.
bool IsMemoryStraggler(int64_t peak, int64_t median) {
  return static_cast<double>(peak) > 1.1 * static_cast<double>(median) &&
         peak - median >= (int64_t{64} << 20);
}

// "over 2 ranks"
std::string Over(size_t inputs, const std::string& by) {
  const std::string unit = by == "rank" ? "rank" : "process";
  return "over " + std::to_string(inputs) + " " + unit +
         (inputs == 1      ? ""
          : unit == "rank" ? "s"
                           : "es");
}

// "against a median of 20.1 ms over 2 ranks"
std::string AgainstMedian(double median_ms, size_t inputs, const std::string& by) {
  return "against a median of " + FormatFixed(median_ms, 1) + " ms " + Over(inputs, by);
}

struct OpStraggler {
  double excess_ms;
  std::string text;
};

using Evidence = std::map<size_t, StragglerEvidence>;  // by input

std::vector<std::string> OpWarnings(const std::vector<EventRow>& rows,
                                    const std::vector<size_t>& row_slowest,
                                    const InputNames& names, Evidence* evidence) {
  const std::string& by = names.by;
  const size_t inputs = names.labels.size();
  std::vector<OpStraggler> found;
  for (size_t r = 0; r < rows.size(); ++r) {
    const EventRow& row = rows[r];
    if (!row.spread || WaitsForCommunication(row.name) ||
        !IsStraggler(row.spread->max_ms, row.spread->median_ms)) {
      continue;
    }
    const double excess = row.spread->max_ms - row.spread->median_ms;
    const std::string case_text = RowLabel(row) + ": " + FormatFixed(row.spread->max_ms, 1) +
                                  " ms there " + AgainstMedian(row.spread->median_ms, inputs, by);
    const size_t slowest = row_slowest[r];
    found.push_back({excess, names.labels[slowest] + " is a straggler in " + case_text});
    // Ops nest: the largest excess stands for them all.
    StragglerEvidence& e = (*evidence)[slowest];
    ++e.ops;
    e.behind_ms = std::max(e.behind_ms, excess);
    if (excess > e.worst_ms) {
      e.worst_ms = excess;
      e.worst = case_text;
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const OpStraggler& a, const OpStraggler& b) {
    return a.excess_ms > b.excess_ms;
  });
  std::vector<std::string> warnings;
  for (size_t i = 0; i < found.size() && i < kOpsListed; ++i) warnings.push_back(found[i].text);
  if (found.size() > kOpsListed) {
    warnings.push_back(std::to_string(found.size() - kOpsListed) +
                       " more stragglers among the ops, each behind by less than the ones "
                       "above; every row's spread names its slowest " +
                       by + ".");
  }
  return warnings;
}

std::vector<std::string> StepWarnings(const std::vector<StepSummary>& steps,
                                      const std::vector<StepWork>& work, const InputNames& names,
                                      Evidence* evidence) {
  std::map<size_t, double> steps_behind_ms;
  struct Straggled {
    size_t count = 0;
    std::string listed;
  };
  std::map<size_t, Straggled> by_input;  // in input order
  for (size_t i = 0; i < steps.size() && i < work.size(); ++i) {
    const StepSummary& step = steps[i];
    if (work[i].ms.empty()) continue;
    std::vector<double> ms;
    for (const auto& [input, work_ms] : work[i].ms) ms.push_back(work_ms);
    const double median = LowerMedian(ms);
    const size_t input = work[i].slowest;
    const double slowest = work[i].ms.at(input);
    if (!IsStraggler(slowest, median)) continue;
    const bool waited =
        std::any_of(work[i].ms.begin(), work[i].ms.end(), [&](const auto& other) {
          const auto wall = step.wall_ms_by.find(names.keys[other.first]);
          return wall != step.wall_ms_by.end() && wall->second != other.second;
        });
    Straggled& s = by_input[input];
    const std::string case_text = std::string("step ") + std::to_string(step.step) + ": " +
                                  FormatFixed(slowest, 1) +
                                  (waited ? " ms outside communication " : " ms ") +
                                  AgainstMedian(median, ms.size(), names.by);
    if (++s.count <= kStepsListed) s.listed += (s.count == 1 ? "" : "; ") + case_text;
    StragglerEvidence& e = (*evidence)[input];
    ++e.steps;
    e.of_steps = steps.size();
    steps_behind_ms[input] += slowest - median;
    if (slowest - median > e.worst_ms) {
      e.worst_ms = slowest - median;
      e.worst = case_text;
    }
  }
  // Steps follow one another: their excesses add up, past any one op's.
  for (const auto& [input, ms] : steps_behind_ms) {
    StragglerEvidence& e = (*evidence)[input];
    e.behind_ms = std::max(e.behind_ms, ms);
  }
  std::vector<std::string> warnings;
  for (const auto& [input, s] : by_input) {
    std::string more;
    if (s.count > kStepsListed) more = "; " + std::to_string(s.count - kStepsListed) + " more";
    warnings.push_back(names.labels[input] + " is a straggler in " + std::to_string(s.count) +
                       " of " +
                       std::to_string(steps.size()) + " steps (" + s.listed + more + ")");
  }
  return warnings;
}

}  // namespace

std::vector<std::string> StragglerWarnings(const std::vector<EventRow>& rows,
                                           const std::vector<size_t>& row_slowest,
                                           const std::vector<StepSummary>& steps,
                                           const std::vector<StepWork>& work,
                                           const InputNames& names,
                                           std::vector<StragglerEvidence>* evidence) {
  Evidence found;
  std::vector<std::string> warnings = OpWarnings(rows, row_slowest, names, &found);
  for (std::string& w : StepWarnings(steps, work, names, &found)) warnings.push_back(std::move(w));
  for (auto& [input, e] : found) {
    e.input = names.labels[input];
    evidence->push_back(std::move(e));
  }
  return warnings;
}

std::vector<std::string> MemoryStragglerWarnings(
    const std::map<std::string, std::map<std::string, int64_t>>& peaks_by,
    const InputNames& names) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const auto mib = [](int64_t bytes) { return FormatGrouped(bytes / kMiB, 1) + " MiB"; };
  std::vector<std::string> warnings;
  for (const auto& [kind, by_key] : peaks_by) {
    std::vector<int64_t> peaks;
    for (const auto& [key, bytes] : by_key) peaks.push_back(bytes);
    const int64_t median = LowerMedian(peaks);
    for (size_t i = 0; i < names.keys.size(); ++i) {
      const auto peak = by_key.find(names.keys[i]);
      if (peak == by_key.end() || !IsMemoryStraggler(peak->second, median)) continue;
      warnings.push_back(names.labels[i] + " is a memory straggler on " + kind + ": peak " +
                         mib(peak->second) + " against a median of " + mib(median) + " " +
                         Over(peaks.size(), names.by));
    }
  }
  return warnings;
}

}  // namespace paddle_prof::internal
