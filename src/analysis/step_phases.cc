#include "step_phases.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "gpu_correlation.h"
#include "model_modules.h"
#include "name_interner.h"
#include "number_format.h"
#include "record_cursor.h"

namespace paddle_prof::internal {
namespace {

constexpr int kPhases = 4;  // every Phase but kNone
// Who owns time that several phases cover, first first.
constexpr std::array<Phase, kPhases> kPrecedence = {Phase::kBackward, Phase::kOptimizer,
                                                    Phase::kData, Phase::kForward};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The kept calls of kStaticRunEvent on every thread, merged.
std::vector<TickInterval> StaticRuns(const Collection& c) {
  std::vector<TickInterval> runs = KeptCallsNamed(
      c, [](const char* name) { return NameBytes(name) == kStaticRunEvent; });
  MergeIntervals(&runs);
  return runs;
}

// Whether [start, end] lies inside one of `runs` (merged: sorted and disjoint).
bool Inside(const std::vector<TickInterval>& runs, uint64_t start, uint64_t end) {
  auto after = std::upper_bound(runs.begin(), runs.end(), TickInterval(start, UINT64_MAX));
  return after != runs.begin() && (after - 1)->second >= end;
}

// The phases' calls from every thread, each phase's merged. A call with no phase of its
// own inside a static program's run has its op's role.
std::array<std::vector<TickInterval>, kPhases> PhaseIntervals(const Collection& c) {
  std::array<std::vector<TickInterval>, kPhases> calls;
  const std::vector<TickInterval> static_runs = StaticRuns(c);
  struct Phases {
    Phase own, in_static_run;
  };
  std::unordered_map<const char*, Phases> phases;  // by interned or literal name
  for (const ThreadSnapshot& thread : c.threads) {
    const char* last = nullptr;
    Phases last_phases{};  // consecutive records are often the same event
    for (RecordCursor records(thread); records.NextCall();) {
      const RecordedCall& call = records.call();
      if (!Kept(c, call)) continue;
      if (call.name != last) {
        last = call.name;
        const auto [it, inserted] = phases.try_emplace(call.name, Phases{});
        if (inserted) {
          const std::string name = NameBytes(call.name);
          it->second.own = PhaseOf(name);
          it->second.in_static_run = static_runs.empty() ? Phase::kNone : StaticOpPhase(name);
        }
        last_phases = it->second;
      }
      Phase phase = last_phases.own;
      if (phase == Phase::kNone && last_phases.in_static_run != Phase::kNone &&
          Inside(static_runs, call.start, call.end)) {
        phase = last_phases.in_static_run;
      }
      if (phase != Phase::kNone) calls[static_cast<int>(phase)].emplace_back(call.start, call.end);
    }
  }
  for (std::vector<TickInterval>& phase : calls) MergeIntervals(&phase);
  return calls;
}

// The covered time cut into disjoint spans, in order, each owned by the first phase of
// kPrecedence that covers it.
std::vector<PhaseSpan> OwnedSpans(const std::array<std::vector<TickInterval>, kPhases>& calls) {
  struct Edge {
    uint64_t tick;
    int phase;
    int delta;
  };
  std::vector<Edge> edges;
  for (int p = 0; p < kPhases; ++p) {
    for (const auto& [start, end] : calls[p]) {
      edges.push_back({start, p, +1});
      edges.push_back({end, p, -1});
    }
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.tick < b.tick; });
  std::vector<PhaseSpan> spans;
  std::array<int, kPhases> open{};
  for (size_t i = 0; i < edges.size();) {
    const uint64_t tick = edges[i].tick;
    for (; i < edges.size() && edges[i].tick == tick; ++i) open[edges[i].phase] += edges[i].delta;
    if (i == edges.size()) break;
    for (const Phase phase : kPrecedence) {
      if (open[static_cast<int>(phase)] > 0) {
        spans.push_back({tick, edges[i].tick, phase});
        break;
      }
    }
  }
  return spans;
}

double& Field(StepPhases& phases, Phase phase) {
  switch (phase) {
    case Phase::kData: return phases.data;
    case Phase::kForward: return phases.forward;
    case Phase::kBackward: return phases.backward;
    case Phase::kOptimizer: return phases.optimizer;
    case Phase::kNone: break;
  }
  return phases.other;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

Phase PhaseOf(std::string_view name) {
  if (StartsWith(name, "enumerate(DataLoader)#") || StartsWith(name, "paddle.io.DataLoader#") ||
      name == "paddle.static.Executor.feed") {
    return Phase::kData;
  }
  if (std::string_view path; ModuleEventPath(name, &path)) {  // a root's: its class name alone
    return path.find('.') == std::string_view::npos ? Phase::kForward : Phase::kNone;
  }
  if (name == "torch.autograd.backward" || name == "torch.autograd.grad" ||
      name == "paddle.autograd.backward" || name == "paddle.autograd.grad") {
    return Phase::kBackward;
  }
  if (StartsWith(name, "Optimizer.step#") || StartsWith(name, "Optimizer.zero_grad#") ||
      StartsWith(name, "Optimizer.clear_grad#") || StartsWith(name, "Optimizer.minimize#")) {
    return Phase::kOptimizer;
  }
  return Phase::kNone;
}

bool IsPlainOpName(std::string_view name) {
  for (const char ch : name) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return !name.empty();
}

Phase StaticOpPhase(std::string_view name) {
  if (name == "fetch" || !IsPlainOpName(name)) return Phase::kNone;
  if (EndsWith(name, "_grad") || EndsWith(name, "_grad_")) return Phase::kBackward;
  // Paddle's optimizers' update ops, in place ("adam_") or not.
  static constexpr std::string_view kUpdates[] = {
      "sgd", "momentum", "lars_momentum", "merged_momentum", "dgc_momentum", "adam",
      "adamw", "merged_adam", "fused_adam", "adamax", "nadam", "radam", "lamb", "adagrad",
      "decayed_adagrad", "adadelta", "rmsprop", "ftrl", "asgd", "rprop", "dpsgd"};
  const std::string_view op = EndsWith(name, "_") ? name.substr(0, name.size() - 1) : name;
  for (const std::string_view update : kUpdates) {
    if (op == update) return Phase::kOptimizer;
  }
  return Phase::kForward;
}

std::vector<PhaseSpan> PhaseSpans(const Collection& c) { return OwnedSpans(PhaseIntervals(c)); }

std::vector<StepPhases> PhasesPerStep(const Collection& c, const std::vector<PhaseSpan>& spans) {
  std::vector<StepPhases> phases(c.steps.size());
  if (c.steps.empty()) return phases;
  uint64_t step_start = c.start_tick;
  size_t next = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const uint64_t step_end = c.steps[i].tick;
    std::array<uint64_t, kPhases> ticks{};
    while (next < spans.size() && spans[next].end <= step_start) ++next;
    for (size_t k = next; k < spans.size() && spans[k].start < step_end; ++k) {
      const uint64_t from = std::max(spans[k].start, step_start);
      const uint64_t to = std::min(spans[k].end, step_end);
      if (to > from) ticks[static_cast<int>(spans[k].phase)] += to - from;
    }
    const uint64_t wall = step_end > step_start ? step_end - step_start : 0;
    uint64_t in_phases = 0;
    for (int p = 0; p < kPhases; ++p) {
      Field(phases[i], static_cast<Phase>(p)) = c.TicksToMs(ticks[p]);
      in_phases += ticks[p];
    }
    phases[i].other = c.TicksToMs(wall - std::min(in_phases, wall));
    step_start = step_end;
  }
  return phases;
}

std::string ThroughputLine(const Throughput& t) {
  return "ips: " +
         (t.samples_per_s ? FormatGrouped(*t.samples_per_s, 1) + " samples/s"
                          : std::string("- samples/s")) +
         ", reader " + FormatFixed(t.reader_cost_ms, 2) + " ms, batch " +
         FormatFixed(t.batch_cost_ms, 2) + " ms\n";
}

bool HasPhases(const Report& report) {
  for (const StepSummary& step : report.steps) {
    const StepPhases& p = step.phases_ms;
    if (step.samples || p.data > 0 || p.forward > 0 || p.backward > 0 || p.optimizer > 0) {
      return true;
    }
  }
  return false;
}

std::optional<Throughput> ThroughputOf(const std::vector<StepSummary>& steps) {
  if (steps.empty()) return std::nullopt;
  std::vector<double> rates, reader, batch;
  for (const StepSummary& step : steps) {
    if (step.samples && step.wall_ms > 0) {
      rates.push_back(static_cast<double>(*step.samples) / (step.wall_ms / 1e3));
    }
    reader.push_back(step.phases_ms.data);
    batch.push_back(step.wall_ms);
  }
  Throughput t;
  if (!rates.empty()) t.samples_per_s = Median(std::move(rates));
  t.reader_cost_ms = Median(std::move(reader));
  t.batch_cost_ms = Median(std::move(batch));
  return t;
}

}  // namespace paddle_prof::internal
