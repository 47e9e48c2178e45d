#include "report_builder.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "advice.h"
#include "call_paths.h"
#include "call_rows.h"
#include "memory_categories.h"
#include "memory_figures.h"
#include "memory_growth.h"
#include "memory_timeline.h"
#include "model_modules.h"
#include "name_interner.h"
#include "native_stacks.h"
#include "number_format.h"
#include "paddle_prof/place.h"
#include "place_shares.h"
#include "record_scan.h"
#include "row_label.h"
#include "scope_memory.h"
#include "sort_keys.h"
#include "step_communication.h"
#include "step_phases.h"

namespace paddle_prof::internal {

namespace {

struct RowKey {
  std::string name;
  bool has_tag;
  std::string tag;
  int thread;  // -1 when threads are merged
  bool operator<(const RowKey& o) const {
    return std::tie(name, has_tag, tag, thread) < std::tie(o.name, o.has_tag, o.tag, o.thread);
  }
};

// The EventRow::kMaxSources frames with the most calls, most first (equal frames of different
// stacks added up), ties by frame.
std::vector<SourceCalls> TopSources(const std::map<const std::string*, int64_t>& by_frame) {
  std::map<std::string, int64_t> calls;
  for (const auto& [frame, n] : by_frame) calls[*frame] += n;
  std::vector<SourceCalls> top;
  for (const auto& [frame, n] : calls) top.push_back({frame, n});
  std::stable_sort(top.begin(), top.end(),
                   [](const SourceCalls& a, const SourceCalls& b) { return a.calls > b.calls; });
  if (top.size() > EventRow::kMaxSources) top.resize(EventRow::kMaxSources);
  return top;
}

EventRow MakeRow(const Collection& c, const RowKey& key, const Accumulator& acc) {
  EventRow row;
  for (int place = 0; place < static_cast<int>(c.places.size()) && place < kMaxPlaces; ++place) {
    if (acc.Has(place)) row.memory[c.places[place].place] = acc.memory[place];
  }
  row.name = key.name;
  if (key.has_tag) row.tag = key.tag;
  if (key.thread >= 0) row.thread = key.thread;
  row.calls = acc.calls;
  row.sources = TopSources(acc.sources);
  if (acc.calls > 0) {
    row.total_ms = c.TicksToMs(acc.total);
    row.self_ms = c.TicksToMs(acc.self);
    row.min_ms = c.TicksToMs(acc.min);
    row.max_ms = c.TicksToMs(acc.max);
    // Rounding could put total/calls a hair outside [min, max]; the invariant is kept.
    row.ave_ms = std::clamp(row.total_ms / static_cast<double>(acc.calls), row.min_ms, row.max_ms);
    std::array<double, kPercents.size()> percentiles_ms{};
    const auto percentiles = acc.durations.Percentiles();
    for (size_t i = 0; i < percentiles.size(); ++i) percentiles_ms[i] = c.TicksToMs(percentiles[i]);
    SetPercentiles(percentiles_ms, &row);
    row.durations = acc.durations.Counts(c.ns_per_tick);
  }
  if (c.gpu_traced) {
    const bool any = acc.calls > 0;
    row.gpu_total_ms = c.TicksToMs(acc.gpu_total);
    row.gpu_min_ms = any ? c.TicksToMs(acc.gpu_min) : 0;
    row.gpu_max_ms = any ? c.TicksToMs(acc.gpu_max) : 0;
    row.gpu_ave_ms = any ? std::clamp(*row.gpu_total_ms / static_cast<double>(acc.calls),
                                      *row.gpu_min_ms, *row.gpu_max_ms)
                         : 0;
  }
  return row;
}

std::string Calls(int64_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

// Each at_peak entry's native frames: of its blocks (same event, tag and path) allocated
// by the peak and still live at the end, those of the stack that allocated most.
void AddNativeStacks(const Collection& c, int place, uint64_t peak_tick, CallPaths* paths,
                     std::vector<RowBytes>* at_peak) {
  using Key = std::tuple<std::string, std::optional<std::string>, std::vector<std::string>>;
  std::map<Key, std::map<uint32_t, int64_t>> stacks;
  for (const LiveBlock& b : c.live_blocks) {
    if (b.place != place || b.native_stack == 0 || b.tick > peak_tick) continue;
    const std::optional<std::string> tag =
        b.tag != nullptr ? std::optional<std::string>(NameBytes(b.tag)) : std::nullopt;
    const char* name = b.name != nullptr ? b.name : kNoEventName;
    stacks[{NameBytes(name), tag, paths->Names(paths->PathOf(b.thread, b.tick, name))}]
          [b.native_stack] += b.size;
  }
  for (RowBytes& r : *at_peak) {
    const auto found = stacks.find({r.name, r.tag, r.path});
    if (found == stacks.end()) continue;
    const auto most = std::max_element(found->second.begin(), found->second.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    r.native_stack = NativeFrames(most->first);
  }
}

// The innermost module forward in a call path ("Net.block.fc1"), or "" for none.
std::string ModuleOf(const std::vector<std::string>& path) {
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    std::string_view module;
    if (!ModuleEventPath(*it, &module)) continue;
    if (module.size() >= kModuleBackwardSuffix.size() &&
        module.substr(module.size() - kModuleBackwardSuffix.size()) == kModuleBackwardSuffix) {
      continue;
    }
    return std::string(module);
  }
  return "";
}

// The place's categories at its replayed peak (the first moment of the highest live
// bytes) and at the window's end, and the modules whose forwards allocated the most of
// the activations live at the peak.
void AddCategories(const Collection& c, const BlockCategories& categories, int place,
                   CallPaths* paths, PlaceSummary* p) {
  int64_t live = p->start_bytes, highest = live;
  size_t applied = 0, at_peak = 0, peak_end = 0;
  for (size_t i = 0; i < c.memory_events.size(); ++i) {
    if (c.memory_events[i].place != place) continue;
    live += c.memory_events[i].delta;
    ++applied;
    if (live > highest) {
      highest = live;
      at_peak = applied;
      peak_end = i + 1;
    }
  }
  const std::vector<CategoryBytes> split = CategoriesAfter(c, categories, place, {at_peak, applied});
  p->categories_at_peak = Named(split[0]);
  p->categories_end = Named(split[1]);
  // The activation blocks live at the peak, by where they were allocated.
  constexpr auto kActivation = static_cast<uint8_t>(MemoryCategory::kActivation);
  std::map<std::pair<int, uint64_t>, std::pair<const char*, int64_t>> held;
  for (size_t i = 0; i < peak_end; ++i) {
    const MemoryEvent& e = c.memory_events[i];
    if (e.place != place || categories.of_event[i] != kActivation) continue;
    if (e.delta > 0) {
      held[{e.alloc_thread, e.alloc_tick}] = {e.name, e.delta};
    } else {
      held.erase({e.alloc_thread, e.alloc_tick});
    }
  }
  std::map<std::string, int64_t> by_module;
  for (const auto& [block, owner] : held) {
    const std::string module =
        ModuleOf(paths->Names(paths->PathOf(block.first, block.second, owner.first)));
    if (!module.empty()) by_module[module] += owner.second;
  }
  for (const auto& [module, bytes] : by_module) p->activations_at_peak.push_back({module, bytes});
  std::stable_sort(p->activations_at_peak.begin(), p->activations_at_peak.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  constexpr size_t kKept = 5;
  if (p->activations_at_peak.size() > kKept) p->activations_at_peak.resize(kKept);
}

// The window's blocks live on `place`, by event, tag, call path and source, largest first.
std::vector<RowBytes> LiveHolders(const Collection& c, const std::string& place, CallPaths* paths) {
  std::map<std::tuple<const char*, const char*, int, const std::string*>, int64_t> by_pointer;
  for (const LiveBlock& b : c.live_blocks) {
    if (b.place < static_cast<int>(c.places.size()) && c.places[b.place].place == place) {
      const CallPaths::Origin origin = paths->OriginOf(b.thread, b.tick, b.name);
      by_pointer[{b.name, b.tag, origin.path, origin.source}] += b.size;
    }
  }
  std::map<std::tuple<std::string, std::optional<std::string>, std::vector<std::string>,
                      std::optional<std::string>>,
           int64_t>
      held;
  const auto text = [](const auto* s) {
    return s != nullptr ? std::optional<std::string>(NameBytes(s)) : std::nullopt;
  };
  for (const auto& [key, bytes] : by_pointer) {
    const auto& [name, tag, path, source] = key;
    held[{NameBytes(name != nullptr ? name : kNoEventName), text(tag), paths->Names(path),
          source != nullptr ? std::optional<std::string>(*source) : std::nullopt}] += bytes;
  }
  std::vector<RowBytes> holders;
  for (const auto& [key, bytes] : held) {
    holders.push_back({std::get<0>(key), std::get<1>(key), bytes, std::get<2>(key), std::get<3>(key), {}});
  }
  std::stable_sort(holders.begin(), holders.end(),
                   [](const RowBytes& a, const RowBytes& b) { return a.bytes > b.bytes; });
  return holders;
}

// "out of memory on CPU asking 17,179,869,184 bytes in aten::empty (train_step >
// aten::empty); the place held 1,203,456 bytes: conv2d 800,000 bytes (train_step >
// conv2d), ...": what holds most of the place's live bytes, largest first.
std::string OutOfMemoryWarning(const OutOfMemory& oom) {
  std::string text = "out of memory on " + oom.place + " asking " +
                     FormatUnsignedByteCount(oom.requested_bytes) + " in " + oom.event;
  if (!oom.path.empty()) text += " (" + JoinPath(oom.path) + ")";
  text += "; the place held " + FormatByteCount(oom.live_bytes);
  constexpr size_t kHolders = 3;
  for (size_t i = 0; i < oom.holders.size() && i < kHolders; ++i) {
    const RowBytes& h = oom.holders[i];
    text += (i == 0 ? ": " : ", ") + h.name + (h.tag ? " " + *h.tag : "") + " " +
            FormatByteCount(h.bytes);
    if (h.path.size() > 1) text += " (" + JoinPath(h.path) + ")";
    if (h.source) text += " from " + *h.source;
  }
  if (oom.holders.empty()) text += ", none of it allocated by an event of this window";
  return text + ".";
}

// How a place's peak_bytes was found, where it is not the exact high-water mark.
// Caveats on how the places' peaks were measured: notes, not warnings.
std::vector<std::string> PeakNotes(const Collection& c) {
  std::vector<std::string> w;
  for (size_t i = 0; i < c.places.size(); ++i) {
    const std::string& place = c.places[i].place;
    const int movers = i < c.place_movers.size() ? c.place_movers[i] : 0;
    if (!c.memory_timeline && movers > 1 && place != PlaceName(NativePlace())) {
      w.push_back(place + ": peak_bytes is an upper bound, the threads' own high-water marks " +
                  "added up: " + std::to_string(movers) +
                  " threads allocated or freed on it between two step marks, and without the "
                  "memory timeline (FLAGS_paddle_prof_memory_timeline=0) the moment of the "
                  "peak is not known.");
    }
  }
  return w;
}

void AddWarnings(const Collection& c, int64_t cut, int64_t open, const MemoryGrowth& live,
                 const ProcessGrowth& process, Report* report) {
  auto& w = report->warnings;
  w = c.warnings;
  if (report->oom) w.insert(w.begin(), OutOfMemoryWarning(*report->oom));
  if (c.steps_dropped > 0 && !c.steps.empty()) {
    w.push_back("flight recorder (keep_last_steps=" + std::to_string(c.keep_last_steps) +
                "): the report covers steps " + std::to_string(c.steps_dropped) + "-" +
                std::to_string(c.steps_dropped + static_cast<int64_t>(c.steps.size()) - 1) +
                " and what ran after them; the " + std::to_string(c.steps_dropped) +
                " step(s) before were dropped.");
  }
  if (c.failures_after_oom > 0) {
    w.push_back(std::to_string(c.failures_after_oom) +
                " allocation failure(s) after the window's out-of-memory dump: one dump is "
                "written per window.");
  }
  if (cut > 0) {
    w.push_back(Calls(cut) +
                " began before ResetProfiler() and ended after it; they are left out.");
  }
  if (open += c.open_before_reset; open > 0) {
    w.push_back(Calls(open) + (c.snapshot
                                   ? " still open at the snapshot; they are left out."
                                   : " still open when the profiler stopped; they are left out."));
  }
  if (c.forced_closes > 0) {
    w.push_back(std::to_string(c.forced_closes) +
                " scope(s) ended while scopes opened after them were still open; those were "
                "closed at that moment.");
  }
  if (c.foreign_ends > 0) {
    w.push_back(std::to_string(c.foreign_ends) +
                " scope(s) ended on a thread other than the one that began them; they are left "
                "out.");
  }
  for (const std::string* growth : {&live.warning, &process.warning}) {
    if (!growth->empty()) w.push_back(*growth);
  }
  if (c.dropped_memory > 0) {
    w.push_back(std::to_string(c.dropped_memory) +
                " memory record(s) not recorded: the event buffer bound "
                "(FLAGS_paddle_prof_max_buffer_mb) was reached; memory figures are incomplete" +
                (c.memory_timeline ? std::string(", and the places' peaks are their live bytes "
                                                 "at the window's edges and step marks.")
                                   : std::string(".")));
  }
  if (c.lost_places > 0) {
    w.push_back(std::to_string(c.lost_places) +
                " scope memory figure(s) lost: a scope touched more than " +
                std::to_string(ScopeMemory::kSlots) + " places.");
  }
  if (c.tracker.untracked > 0) {
    w.push_back(std::to_string(c.tracker.untracked) +
                " block(s) not tracked: no memory could be had for the live-block table.");
  }
  if (c.tracker.oversized > 0) {
    w.push_back(std::to_string(c.tracker.oversized) +
                " allocation(s) of more than 64 PiB (2^56 bytes) ignored: no address space holds "
                "a block that large.");
  }
  if (c.tracker.live_again > 0) {
    w.push_back(std::to_string(c.tracker.live_again) +
                " RecordAlloc() call(s) named a pointer that was still live; the old block was "
                "counted as freed first.");
  }
  const GpuCorrelation& gpu = c.gpu_correlation;
  if (gpu.no_event > 0) {
    w.push_back(std::to_string(gpu.no_event) + " GPU kernel(s), copies or memsets (" +
                FormatFixed(c.TicksToMs(gpu.no_event_ticks), 3) +
                " ms) were launched with no event open; they are in the trace only.");
  }
  if (gpu.unrecorded > 0) {
    w.push_back(std::to_string(gpu.unrecorded) +
                " GPU kernel(s), copies or memsets were launched by calls the report leaves out "
                "(cut by a reset, still open, or not recorded).");
  }
  if (c.gpu.dropped > 0) {
    w.push_back(std::to_string(c.gpu.dropped) +
                " GPU activity record(s) dropped by CUPTI (its buffers were full); GPU times are "
                "incomplete.");
  }
  if (c.dropped > 0) {
    w.push_back(Calls(c.dropped) +
                " not recorded: the event buffer bound (FLAGS_paddle_prof_max_buffer_mb=" +
                std::to_string(c.buffer_bound_mb) + ") or the nesting depth bound (" +
                std::to_string(kMaxScopeDepth) + ") was reached.");
  }
  const int64_t buffer_mib =
      static_cast<int64_t>(c.buffer_chunks * (EventBuffer::kChunkBytes >> 20));
  if (buffer_mib > c.buffer_bound_mb) {
    w.push_back("the event buffers hold " + std::to_string(buffer_mib) +
                " MiB, above FLAGS_paddle_prof_max_buffer_mb=" + std::to_string(c.buffer_bound_mb) +
                ": they grow in " + std::to_string(EventBuffer::kChunkBytes >> 20) +
                " MiB chunks, and every recording thread gets its first chunk whatever the "
                "bound.");
  }
}

}  // namespace

void SortRows(EventSortingKey key, std::vector<EventRow>* rows) {
  const SortValue value = SortValueOf(key);
  std::sort(rows->begin(), rows->end(), [value](const EventRow& a, const EventRow& b) {
    const double va = value(a);
    const double vb = value(b);
    if (va != vb) return va > vb;
    return std::tie(a.name, a.tag, a.thread, a.process) <
           std::tie(b.name, b.tag, b.thread, b.process);
  });
}

Report BuildReport(const Collection& c, const ReportOptions& options) {
  const bool per_thread = options.per_thread;
  const EventSortingKey key = options.key;
  std::map<RowKey, Accumulator> merged;
  const bool replayed = c.Replayed();
  const bool categorised = c.Categorised();
  // The calls' rows, read with the memory events unless a trace was to be written.
  const std::vector<ThreadCalls> read_here =
      c.thread_calls.size() == c.threads.size() ? std::vector<ThreadCalls>() : ScanCalls(c);
  const std::vector<ThreadCalls>& thread_calls = read_here.empty() ? c.thread_calls : read_here;
  int64_t cut = 0, open = 0;  // calls left out
  for (size_t position = 0; position < thread_calls.size(); ++position) {
    const ThreadCalls& calls = thread_calls[position];
    cut += calls.cut;
    open += calls.open;
    for (const auto& [k, acc] : calls.rows) {
      RowKey row_key{NameBytes(k.name), k.tag != nullptr, k.tag != nullptr ? NameBytes(k.tag) : "",
                     per_thread ? c.threads[position].index : -1};
      merged[row_key].Merge(acc);
    }
  }

  // Memory that no call's figures carry: what threads did with no event open, and the
  // blocks still live, each charged to the event open when it was allocated.
  for (const NoEventUsage& u : c.no_event) {
    merged[{kNoEventName, false, "", per_thread ? u.thread : -1}].AddMemory(u.place, u.stats);
  }
  for (const LiveBlock& b : c.live_blocks) {
    MemoryStats live;
    live.live_bytes = b.size;
    merged[{NameBytes(b.name), b.tag != nullptr, b.tag != nullptr ? NameBytes(b.tag) : "",
            per_thread ? b.thread : -1}]
        .AddMemory(b.place, live);
  }

  Report report;
  report.state = c.state;
  report.sorted_by = key == EventSortingKey::kDefault ? EventSortingKey::kTotal : key;
  report.wall_ms = c.TicksToMs(c.end_tick - c.start_tick);
  report.dropped_events = c.dropped;
  report.cycle = options.cycle;
  report.oom = c.oom;
  CallPaths paths(c);
  if (report.oom) {
    constexpr size_t kKept = 10;
    report.oom->holders = LiveHolders(c, report.oom->place, &paths);
    if (report.oom->holders.size() > kKept) report.oom->holders.resize(kKept);
  }
  report.process = c.process;
  report.clock = c.clock;
  double self_sum = 0;
  for (const auto& [row_key, acc] : merged) {
    report.events.push_back(MakeRow(c, row_key, acc));
    self_sum += report.events.back().self_ms;
  }
  for (EventRow& row : report.events) row.ratio = self_sum > 0 ? row.self_ms / self_sum : 0;
  SortRows(report.sorted_by, &report.events);

  // The places' and steps' peaks so far are the live bytes at the window's edges and step
  // marks (and, without the timeline, the threads' own high-water marks): a whole replay
  // has every moment between them.
  std::vector<std::vector<int64_t>> step_peaks(c.places.size());
  report.places = c.places;
  // A second pass over the records, only for a window that recorded phases
  // (a framework bridge's) at all, and has categories or steps to split by them.
  const bool phased = std::any_of(
      report.events.begin(), report.events.end(), [](const EventRow& row) {
        return PhaseOf(row.name) != Phase::kNone || row.name == kStaticRunEvent;
      });
  const std::vector<PhaseSpan> phase_spans = phased && (categorised || !c.steps.empty())
                                                 ? PhaseSpans(c)
                                                 : std::vector<PhaseSpan>();
  const std::optional<BlockCategories> categories =
      categorised ? std::optional(CategorizeBlocks(c, thread_calls, phase_spans))
                  : std::nullopt;
  for (size_t place = 0; place < report.places.size(); ++place) {
    PlaceSummary& p = report.places[place];
    if (categories) AddCategories(c, *categories, static_cast<int>(place), &paths, &p);
    int64_t replayed_peak = 0;
    uint64_t peak_tick = 0;
    p.at_peak = RowsAtPeak(c.memory_events, static_cast<int>(place), p.start_bytes,
                           &replayed_peak, &paths, &peak_tick);
    // The native place's peak is exact (its one word), and so are its holders then.
    if (c.native_peak >= 0 && c.memory_timeline && p.place == PlaceName(NativePlace())) {
      p.at_peak = NativeRowsAtPeak(c, static_cast<int>(place), &paths);
    }
    if (c.record_stacks) AddNativeStacks(c, static_cast<int>(place), peak_tick, &paths, &p.at_peak);
    if (replayed) {
      p.peak_bytes = std::max(p.peak_bytes, replayed_peak);
      step_peaks[place] = ReplayedStepPeaks(c, static_cast<int>(place));
    }
    report.timeline[p.place] =
        PlaceTimeline(c, static_cast<int>(place), p.peak_bytes, categories ? &*categories : nullptr);
  }

  // A second pass over the records, only for a window that communicated at all.
  const bool communicated =
      std::any_of(report.events.begin(), report.events.end(),
                  [](const EventRow& row) { return IsCommunication(row.name); });
  const std::vector<double> comm_ms =
      communicated ? CommunicationMsPerStep(c) : std::vector<double>(c.steps.size(), 0.0);
  const std::vector<StepPhases> phases = PhasesPerStep(c, phase_spans);
  uint64_t step_start = c.start_tick;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    StepSummary step;
    step.comm_ms = comm_ms[i];
    step.samples = c.steps[i].samples;
    step.phases_ms = phases[i];
    report.phases_ms += phases[i];
    step.step = static_cast<int>(c.steps_dropped + static_cast<int64_t>(i));
    step.wall_ms = c.TicksToMs(c.steps[i].tick - step_start);
    step.peak_bytes = c.steps[i].peak_bytes;
    for (size_t place = 0; place < step_peaks.size(); ++place) {
      if (i >= step_peaks[place].size()) continue;
      int64_t& peak = step.peak_bytes[c.places[place].place];
      peak = std::max(peak, step_peaks[place][i]);
    }
    step.end_bytes = c.steps[i].end_bytes;
    step.process = c.steps[i].process;
    step_start = c.steps[i].tick;
    report.steps.push_back(std::move(step));
  }
  report.throughput = ThroughputOf(report.steps);
  report.modules = BuildModules(c);
  const MemoryGrowth live = FindMemoryGrowth(c, &paths);
  const ProcessGrowth process = FindProcessGrowth(c);
  AddWarnings(c, cut, open, live, process, &report);
  report.notes = PeakNotes(c);
  report.advice = GrowthAdvice(live, process);
  for (Advice& a : FigureAdvice(report)) report.advice.push_back(std::move(a));
  return report;
}

}  // namespace paddle_prof::internal
