#include "report_merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "advice.h"
#include "merge_inputs.h"
#include "model_modules.h"
#include "row_label.h"
#include "row_merge.h"
#include "step_phases.h"
#include "straggler_warnings.h"

namespace paddle_prof::internal {

namespace {

// Adds to `total` the magnitudes of what a merge adds up of `report`'s (calls, bytes and
// counts, sources' calls, dropped events); false once the total passes INT64_MAX, past
// which a merged sum could overflow. Only a summary that no profiler wrote gets there.
bool AddFigures(const Report& report, uint64_t* total) {
  const auto add = [total](int64_t v) {
    const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return !__builtin_add_overflow(*total, magnitude, total) &&
           *total <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  };
  bool fits = add(report.dropped_events);
  for (const EventRow& row : report.events) {
    fits = fits && add(row.calls);
    for (const auto& [place, m] : row.memory) {
      for (const int64_t v :
           {m.peak_bytes, m.alloc_bytes, m.alloc_count, m.free_bytes, m.free_count, m.live_bytes}) {
        fits = fits && add(v);
      }
    }
    for (const SourceCalls& source : row.sources) fits = fits && add(source.calls);
  }
  return fits;
}

// A parent's profile holds its children's already: merging one of them again would
// count it twice.
void CheckNoChildTwice(const std::vector<Report>& inputs) {
  std::map<std::pair<std::string, int64_t>, size_t> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    seen.emplace(std::make_pair(inputs[i].process.host, inputs[i].process.pid), i);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const ChildProcess& child : inputs[i].processes) {
      const auto again = seen.find(std::make_pair(inputs[i].process.host, child.pid));
      if (again == seen.end()) continue;
      throw std::invalid_argument(InputName(inputs[again->second], again->second) +
                                  " is the profile of pid " + std::to_string(child.pid) +
                                  ", a child already merged into " + InputName(inputs[i], i) +
                                  ": merge the parent's profile alone");
    }
  }
}

// Every input counts, 0 ms where it has no such row; the slowest (`*slowest`, an input)
// is the first of the largest.
RowSpread Spread(const std::vector<double>& total_ms, const InputNames& names, size_t* slowest) {
  *slowest = std::max_element(total_ms.begin(), total_ms.end()) - total_ms.begin();
  return {names.by, *std::min_element(total_ms.begin(), total_ms.end()), LowerMedian(total_ms),
          total_ms[*slowest], names.ids[*slowest]};
}

void KeepLargest(const std::map<std::string, int64_t>& from, std::map<std::string, int64_t>* into) {
  for (const auto& [name, value] : from) {
    const auto [it, fresh] = into->emplace(name, value);
    if (!fresh) it->second = std::max(it->second, value);
  }
}

// Steps of the same index: the slowest input's wall time, every input's by its id, and
// each place's (and process figure's) largest over the inputs.
// Steps line up by index. The slowest input of a step is the one with the most time
// outside collective communication: in a synchronous job every rank's step lasts as long
// as the slowest one's, the others waiting in communication. `work` gets that time per
// input, for the straggler warnings.
std::vector<StepSummary> MergeSteps(const std::vector<Report>& inputs, const InputNames& names,
                                    std::vector<StepWork>* work) {
  std::map<int, StepSummary> by_index;
  std::map<int, StepWork> work_by_index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const StepSummary& step : inputs[i].steps) {
      const bool first = by_index.count(step.step) == 0;
      StepSummary& merged = by_index[step.step];
      StepWork& step_work = work_by_index[step.step];
      merged.step = step.step;
      merged.wall_ms_by[names.keys[i]] = step.wall_ms;
      merged.phases_ms_by[names.keys[i]] = step.phases_ms;
      merged.wall_ms = std::max(merged.wall_ms, step.wall_ms);
      // The job's batch is every input's together.
      if (step.samples) merged.samples = merged.samples.value_or(0) + *step.samples;
      const double own = std::max(step.wall_ms - step.comm_ms, 0.0);
      if (first || own > step_work.ms[step_work.slowest]) {
        step_work.slowest = i;
        merged.slowest = names.ids[i];
        merged.comm_ms = step.comm_ms;
        merged.phases_ms = step.phases_ms;  // the slowest input's, whose step is the job's
      }
      step_work.ms[i] = own;
      KeepLargest(step.peak_bytes, &merged.peak_bytes);
      KeepLargest(step.end_bytes, &merged.end_bytes);
      KeepLargest(step.process, &merged.process);
    }
  }
  std::vector<StepSummary> steps;
  for (auto& [index, step] : by_index) {
    steps.push_back(std::move(step));
    work->push_back(std::move(work_by_index[index]));
  }
  return steps;
}

ProcessInfo MergedProcess(const std::vector<Report>& inputs) {
  ProcessInfo process = inputs.front().process;
  process.role = "merged";
  process.rank.reset();
  for (const Report& input : inputs) {
    if (input.process.world_size != process.world_size) process.world_size.reset();
  }
  return process;
}

// The states differ: the merged report keeps the first input's and says so.
std::string StatesWarning(const std::vector<Report>& inputs,
                          const std::vector<std::string>& names) {
  std::string states;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].state == inputs.front().state) continue;
    states += (states.empty() ? "" : ", ") + names[i] + " " + ProfilerStateName(inputs[i].state);
  }
  if (states.empty()) return "";
  return "the inputs profiled different states (" + states +
         "); the merged report's state is the first input's, " +
         ProfilerStateName(inputs.front().state) + ".";
}

// `from`'s places, each gaining `from`'s pid unless it carries its own, and `input` (in a
// merge of reports: "rank 3"; a child's place, of another pid, by its host and pid) unless
// it names its own, and their timelines keyed by the labels that makes, shifted by
// `shift_ms` onto another clock.
void AddPlaces(const Report& from, const std::string& input, double shift_ms,
               std::vector<PlaceSummary>* places, std::map<std::string, TimelinePoints>* timeline) {
  for (PlaceSummary place : from.places) {
    const auto points = from.timeline.find(PlaceLabel(place));
    if (!place.process) place.process = from.process.pid;
    if (!input.empty() && !place.input.empty()) {
      place.input = input + " / " + place.input;  // `from` is a merge itself
    } else if (!input.empty()) {
      ProcessInfo child = from.process;
      child.pid = *place.process;
      place.input = *place.process == from.process.pid ? input : ProcessLabel(child, false);
    }
    if (points != from.timeline.end()) {
      TimelinePoints& shifted = (*timeline)[PlaceLabel(place)] = points->second;
      for (double& t : shifted.t_ms) t += shift_ms;
    }
    places->push_back(std::move(place));
  }
}

// "CUDA" of "CUDA:3": ranks on one node each use a device of their own, and their peaks
// compare by the kind of place.
std::string PlaceKind(const std::string& place) {
  const size_t colon = place.rfind(':');
  if (colon == std::string::npos || colon + 1 == place.size()) return place;
  const bool index = std::all_of(place.begin() + colon + 1, place.end(),
                                 [](char c) { return c >= '0' && c <= '9'; });
  return index ? place.substr(0, colon) : place;
}

// Each input's peak per place kind, the largest of its own places of that kind: not its
// children's (a DataLoader worker's memory is another process's), but every place of an
// input that is a merge itself.
std::map<std::string, std::map<std::string, int64_t>> PeaksBy(const std::vector<Report>& inputs,
                                                              const InputNames& names) {
  std::map<std::string, std::map<std::string, int64_t>> peaks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool merge = !inputs[i].merged_from.empty();
    for (const PlaceSummary& place : inputs[i].places) {
      if (!merge && place.process && *place.process != inputs[i].process.pid) continue;
      const auto [it, fresh] =
          peaks[PlaceKind(place.place)].emplace(names.keys[i], place.peak_bytes);
      if (!fresh) it->second = std::max(it->second, place.peak_bytes);
    }
  }
  return peaks;
}

}  // namespace

void ReportMerger::Add(Report input) {
  const size_t i = inputs_.size();
  if (!AddFigures(input, &figures_)) {
    throw std::invalid_argument(InputName(input, i) +
                                ": its calls, bytes and counts, with those of the inputs "
                                "before it, add up past 2^63: too large to merge");
  }
  // One file twice, spelt alike or not (./a.json, a symlink), is one profile counted
  // twice; two files of one process are kept apart (NameInputs warns of them).
  if (!input.summary_path.empty()) {
    const std::string& path = input.summary_path;
    std::optional<size_t> first;
    if (const auto [same, fresh] = paths_.emplace(path, i); !fresh) first = same->second;
    struct stat file;
    if (!first && stat(path.c_str(), &file) == 0) {
      const auto [same, fresh] = files_.emplace(std::make_pair(file.st_dev, file.st_ino), i);
      if (!fresh) first = same->second;
    }
    if (first) {
      const std::string& earlier = inputs_[*first].summary_path;
      throw std::invalid_argument(
          (earlier == path ? path + " is given twice" : earlier + " and " + path +
                                                            " are the same file") +
          " (inputs " + std::to_string(*first + 1) + " and " + std::to_string(i + 1) +
          "): merge each profile once");
    }
  }
  for (const EventRow& row : input.events) {
    const size_t index = rows_.Add(row);
    if (index == total_ms_.size()) total_ms_.emplace_back();
    total_ms_[index].resize(i + 1, 0.0);
    total_ms_[index][i] += row.total_ms;
  }
  input.events = {};  // folded: only the rest of the input is kept
  inputs_.push_back(std::move(input));
}

Report ReportMerger::Finish(EventSortingKey key) {
  const std::vector<Report>& inputs = inputs_;
  if (inputs.empty()) throw std::invalid_argument("nothing to merge: no profiles were given");
  CheckNoChildTwice(inputs);
  const InputNames input_names = NameInputs(inputs);
  const std::vector<std::string>& names = input_names.labels;

  Report merged;
  merged.state = inputs.front().state;
  merged.sorted_by = key == EventSortingKey::kDefault ? EventSortingKey::kTotal : key;
  merged.cycle = inputs.front().cycle;
  merged.process = MergedProcess(inputs);
  merged.clock.unix_ns = inputs.front().clock.unix_ns + inputs.front().clock.offset_ns;

  for (size_t i = 0; i < inputs.size(); ++i) {
    const Report& input = inputs[i];
    merged.merged_from.push_back(
        {input.summary_path, input.process, 0, names[i], input.wall_ms, input_names.keys[i]});
    merged.processes.insert(merged.processes.end(), input.processes.begin(), input.processes.end());
    merged.dropped_events += input.dropped_events;
    merged.wall_ms = std::max(merged.wall_ms, input.wall_ms);
    merged.clock.unix_ns =
        std::min(merged.clock.unix_ns, input.clock.unix_ns + input.clock.offset_ns);
    if (input.cycle != merged.cycle) merged.cycle.reset();
    for (const std::string& w : input.warnings) merged.warnings.push_back(names[i] + ": " + w);
    for (const std::string& n : input.notes) merged.notes.push_back(names[i] + ": " + n);
    // Growth is seen only in a window's own records: carried. The rest is advised below
    // from the merged figures.
    for (const Advice& a : input.advice) {
      if (a.kind == "varying_shapes" || a.kind == "malloc_retention") {
        merged.advice.push_back(a);
        merged.advice.back().message = names[i] + ": " + a.message;
      }
    }
  }
  // Each input's places on the merged clock, which starts with the earliest input.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Report& input = inputs[i];
    const int64_t start_ns = input.clock.unix_ns + input.clock.offset_ns;
    const double start_ms = static_cast<double>(start_ns - merged.clock.unix_ns) / 1e6;
    merged.merged_from[i].start_ms = start_ms;
    AddPlaces(input, names[i], start_ms, &merged.places, &merged.timeline);
  }
  merged.peaks_by = PeaksBy(inputs, input_names);
  merged.events = std::move(rows_.rows());
  std::vector<size_t> row_slowest(merged.events.size());
  for (size_t index = 0; index < merged.events.size(); ++index) {
    total_ms_[index].resize(inputs.size(), 0.0);  // 0 ms for the inputs after its last
    merged.events[index].spread = Spread(total_ms_[index], input_names, &row_slowest[index]);
  }
  std::vector<StepWork> work;
  merged.steps = MergeSteps(inputs, input_names, &work);
  for (const StepSummary& step : merged.steps) merged.phases_ms += step.phases_ms;
  merged.throughput = ThroughputOf(merged.steps);
  for (const Report& input : inputs) MergeModules(input.modules, &merged.modules);

  for (const std::string& w : input_names.warnings) merged.warnings.push_back(w);
  if (std::string states = StatesWarning(inputs, names); !states.empty()) {
    merged.warnings.push_back(std::move(states));
  }
  // Before the rows are sorted: `row_slowest` follows their order of merging.
  std::vector<StragglerEvidence> stragglers;
  for (std::string& w : StragglerWarnings(merged.events, row_slowest, merged.steps, work,
                                          input_names, &stragglers)) {
    merged.warnings.push_back(std::move(w));
  }
  for (std::string& w : MemoryStragglerWarnings(merged.peaks_by, input_names)) {
    merged.warnings.push_back(std::move(w));
  }
  FinishMergedRows(merged.sorted_by, &merged.events);
  for (Advice& a : FigureAdvice(merged)) merged.advice.push_back(std::move(a));
  // Steps, counted outside communication, say who the others wait for; an op can be slow
  // on a rank only because it holds a wait for another (DDP's backward does).
  const bool in_steps = std::any_of(stragglers.begin(), stragglers.end(),
                                    [](const StragglerEvidence& e) { return e.steps > 0; });
  for (const StragglerEvidence& e : stragglers) {
    if (!in_steps || e.steps > 0) merged.advice.push_back(StragglerAdvice(e));
  }
  return merged;
}

Report MergeReports(const std::vector<Report>& inputs, EventSortingKey key) {
  ReportMerger merger;
  for (const Report& input : inputs) merger.Add(input);
  return merger.Finish(key);
}

void MergeChildren(Report* parent, const std::vector<Report>& all_children, bool per_process) {
  std::vector<std::reference_wrapper<const Report>> children;
  uint64_t total = 0;
  AddFigures(*parent, &total);  // this process's own figures, which fit
  for (const Report& child : all_children) {
    if (AddFigures(child, &total)) {
      children.push_back(child);
    } else {
      parent->warnings.push_back("pid " + std::to_string(child.process.pid) + ": its profile " +
                                 child.summary_path +
                                 " was left out: its calls, bytes and counts add up past 2^63 "
                                 "with those merged before it");
    }
  }
  RowMerger rows;
  const auto add_rows = [&](const Report& report) {
    for (EventRow row : report.events) {
      if (per_process && !row.process) row.process = report.process.pid;
      rows.Add(row);
    }
  };
  add_rows(*parent);
  if (!children.empty()) {
    // Labelled by pid, as the children's places are.
    std::vector<PlaceSummary> places;
    std::map<std::string, TimelinePoints> timeline;
    AddPlaces(*parent, "", 0, &places, &timeline);
    parent->places = std::move(places);
    parent->timeline = std::move(timeline);
  }
  for (const Report& child : children) {
    add_rows(child);
    AddPlaces(child, "", static_cast<double>(child.clock.unix_ns - parent->clock.unix_ns) / 1e6,
              &parent->places, &parent->timeline);
    int64_t calls = 0;
    for (const EventRow& row : child.events) calls += row.calls;
    parent->processes.push_back({child.process.pid, child.process.role, child.process.worker_id,
                                 calls, child.wall_ms, child.summary_path});
    const std::string prefix = "pid " + std::to_string(child.process.pid) + ": ";
    for (const std::string& w : child.warnings) parent->warnings.push_back(prefix + w);
    for (const std::string& n : child.notes) parent->notes.push_back(prefix + n);
    for (const Advice& a : child.advice) {
      parent->advice.push_back(a);
      parent->advice.back().message = prefix + a.message;
    }
    parent->dropped_events += child.dropped_events;  // its rows lack them as the parent's do
  }
  parent->events = std::move(rows.rows());
  FinishMergedRows(parent->sorted_by, &parent->events);
}

}  // namespace paddle_prof::internal
