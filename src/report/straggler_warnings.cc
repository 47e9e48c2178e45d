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

std::string Input(const std::string& by, int64_t id) {
  return (by == "rank" ? "rank " : "process ") + std::to_string(id);
}

// "against a median of 20.1 ms over 2 ranks"
std::string AgainstMedian(double median_ms, size_t inputs, const std::string& by) {
  const std::string unit = by == "rank" ? "rank" : "process";
  return "against a median of " + FormatFixed(median_ms, 1) + " ms over " + std::to_string(inputs) +
         " " + unit +
         (inputs == 1      ? ""
          : unit == "rank" ? "s"
                           : "es");
}

struct OpStraggler {
  double excess_ms;
  std::string text;
};

using Evidence = std::map<int64_t, StragglerEvidence>;  // by rank (or pid)

std::vector<std::string> OpWarnings(const std::vector<EventRow>& rows, const std::string& by,
                                    size_t inputs, Evidence* evidence) {
  std::vector<OpStraggler> found;
  for (const EventRow& row : rows) {
    if (!row.spread || WaitsForCommunication(row.name) ||
        !IsStraggler(row.spread->max_ms, row.spread->median_ms)) {
      continue;
    }
    const double excess = row.spread->max_ms - row.spread->median_ms;
    const std::string case_text = RowLabel(row) + ": " + FormatFixed(row.spread->max_ms, 1) +
                                  " ms there " + AgainstMedian(row.spread->median_ms, inputs, by);
    found.push_back({excess, Input(by, row.spread->argmax) + " is a straggler in " + case_text});
    // Ops nest: the largest excess stands for them all.
    StragglerEvidence& e = (*evidence)[row.spread->argmax];
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

// The lower middle value: with two inputs, the faster one.
double LowerMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

std::vector<std::string> StepWarnings(const std::vector<StepSummary>& steps,
                                      const std::vector<std::map<int64_t, double>>& work_ms_by,
                                      const std::string& by, Evidence* evidence) {
  std::map<int64_t, double> steps_behind_ms;
  struct Straggled {
    size_t count = 0;
    std::string listed;
  };
  std::map<int64_t, Straggled> by_input;  // in rank (or pid) order
  for (size_t i = 0; i < steps.size() && i < work_ms_by.size(); ++i) {
    const StepSummary& step = steps[i];
    if (!step.slowest || work_ms_by[i].empty()) continue;
    std::vector<double> ms;
    for (const auto& [input, work_ms] : work_ms_by[i]) ms.push_back(work_ms);
    const double median = LowerMedian(ms);
    const double slowest = work_ms_by[i].at(*step.slowest);
    if (!IsStraggler(slowest, median)) continue;
    const bool waited =
        std::any_of(work_ms_by[i].begin(), work_ms_by[i].end(), [&step](const auto& input) {
          const auto wall = step.wall_ms_by.find(std::to_string(input.first));
          return wall != step.wall_ms_by.end() && wall->second != input.second;
        });
    Straggled& s = by_input[*step.slowest];
    const std::string case_text = std::string("step ") + std::to_string(step.step) + ": " +
                                  FormatFixed(slowest, 1) +
                                  (waited ? " ms outside communication " : " ms ") +
                                  AgainstMedian(median, ms.size(), by);
    if (++s.count <= kStepsListed) s.listed += (s.count == 1 ? "" : "; ") + case_text;
    StragglerEvidence& e = (*evidence)[*step.slowest];
    ++e.steps;
    e.of_steps = steps.size();
    steps_behind_ms[*step.slowest] += slowest - median;
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
    warnings.push_back(Input(by, input) + " is a straggler in " + std::to_string(s.count) + " of " +
                       std::to_string(steps.size()) + " steps (" + s.listed + more + ")");
  }
  return warnings;
}

}  // namespace

std::vector<std::string> StragglerWarnings(const std::vector<EventRow>& rows,
                                           const std::vector<StepSummary>& steps,
                                           const std::vector<std::map<int64_t, double>>& work_ms_by,
                                           const std::string& by, size_t inputs,
                                           std::vector<StragglerEvidence>* evidence) {
  Evidence found;
  std::vector<std::string> warnings = OpWarnings(rows, by, inputs, &found);
  for (std::string& w : StepWarnings(steps, work_ms_by, by, &found)) {
    warnings.push_back(std::move(w));
  }
  for (auto& [input, e] : found) {
    e.input = Input(by, input);
    evidence->push_back(std::move(e));
  }
  return warnings;
}

}  // namespace paddle_prof::internal
