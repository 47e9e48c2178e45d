// The window control: opening, resetting and closing profiling windows, and step marks.
// Closing a window hands over to the collector, the report builder and the profile
// files. The flight recorder, captures, followed children and fork, the out-of-memory
// dump and the whole-program profile live beside it (window_control.h).
#include "paddle_prof/profiler.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_stacks.h"
#include "child_profiles.h"
#include "clock.h"
#include "collection.h"
#include "collector.h"
#include "flags.h"
#include "gpu_tracer.h"
#include "live_block_table.h"
#include "memory_tracker.h"
#include "module_registry.h"
#include "native_guard.h"
#include "number_format.h"
#include "place_registry.h"
#include "process_memory.h"
#include "profile_files.h"
#include "profiler_control.h"
#include "record_scan.h"
#include "recorder_registry.h"
#include "report_builder.h"
#include "report_options.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof {
namespace internal {

Control& GetControl() {
  static auto* control = new Control;  // leaked: the exit handler may still use it
  return *control;
}

StepMark StepRecord::Mark() const {
  return {tick, places.PeakByName(), places.EndByName(), process.ByName(), samples};
}

namespace {

std::vector<StepMark> StepMarks(const std::vector<StepRecord, ArenaAllocator<StepRecord>>& steps) {
  std::vector<StepMark> marks;
  marks.reserve(steps.size());
  for (const StepRecord& step : steps) marks.push_back(step.Mark());
  return marks;
}

}  // namespace

// Caller holds control.mu. Release: pairs with the acquire in every recorder, so the
// collector of the previous window is done before any thread rewinds its buffer.
void OpenWindow(Control& control) {
  RecorderRegistry::Get().ReleaseRetiredNames();
  control.steps.clear();
  control.flight.steps_dropped = 0;
  control.flight.before_kept.reset();
  control.flight.step_starts.clear();
  g_steps_in_window.store(0, std::memory_order_relaxed);
  g_memory_timeline.store(FLAGS_paddle_prof_memory_timeline, std::memory_order_relaxed);
  control.tracker_at_start = TrackerCountsNow();
  control.capture_failed_at_start = EventBuffer::CaptureChunksFailed();
  control.mappings_not_followed_at_start = MappingsNotFollowedByPreload();
  OpenPlaceWindow();
  control.start_ns = MonotonicNs();
  uint64_t unix_ns = 0;
  Clock::ReadPaired([] { return static_cast<uint64_t>(RealtimeNs()); }, &unix_ns,
                    &control.start_tick);
  control.start_unix_ns = static_cast<int64_t>(unix_ns);
  // A reset's records go; its recorders' chunk files stay for the next window's.
  const bool same_dir = control.capture.open != nullptr && !control.capture.dir.empty() &&
                        control.capture.open->dir == AbsoluteDir(ExpandPathFields(
                                                    control.capture.dir, control.process));
  EndCapture(control, same_dir ? CaptureFiles::kKeepChunks : CaptureFiles::kRemove);
  StartCapture(control, control.last_window + 1, /*fresh=*/!same_dir);
  g_window.store(++control.last_window, std::memory_order_release);
}

namespace {

// The GPU tracer for `state`, started; nullptr for kCPU. Throws std::runtime_error
// saying why the GPU cannot be profiled.
GpuTracer* StartGpuTracer(ProfilerState state) {
  if (state == ProfilerState::kDisabled) {
    throw std::invalid_argument("paddle_prof: EnableProfiler needs kCPU, kCUDA or kAll");
  }
  if (state == ProfilerState::kCPU) return nullptr;
  GpuTracer* tracer = GpuTracerToUse();
  if (tracer == nullptr) {
    throw std::runtime_error(
        "paddle_prof: cannot profile the GPU: this build of paddle_prof has no CUDA support "
        "(build it where CMake finds the CUDA toolkit)");
  }
  tracer->Start();
  return tracer;
}

}  // namespace

GpuTracer* TakeGpuTracer(Control& control) {
  g_gpu_tracer.store(nullptr, std::memory_order_relaxed);
  return std::exchange(control.gpu, nullptr);
}

ReportOptions ReportFromFlags() {
  ReportOptions report;
  try {
    report.key = ParseSortingKey(FLAGS_paddle_prof_sorted_key);
  } catch (const std::invalid_argument& e) {
    LOG(ERROR) << "paddle_prof: FLAGS_paddle_prof_sorted_key: " << e.what() << "; using 'total'";
  }
  report.profile_path = FLAGS_paddle_prof_path;
  report.per_thread = FLAGS_paddle_prof_per_thread;
  report.per_process = FLAGS_paddle_prof_per_process;
  report.row_limit = FLAGS_paddle_prof_row_limit;
  return report;
}

namespace {

// The C++ API's options: per-thread rows from the flag, the rest as given.
ReportOptions OptionsFromApi(EventSortingKey key, const std::string& profile_path) {
  ReportOptions options;
  options.key = key;
  options.per_thread = FLAGS_paddle_prof_per_thread;
  options.per_process = FLAGS_paddle_prof_per_process;
  options.profile_path = profile_path;
  return options;
}

}  // namespace

std::string WindowProfilePath(const Control& control, const ReportOptions& options) {
  return !control.snapshot_path.empty() ? control.snapshot_path : options.profile_path;
}

void EnableLocked(Control& control, ProfilerState state, bool implicit,
                  const ParentWindow* child_of) {
  // For this window only, whether it opens or not.
  const std::optional<Control::Distributed> distributed =
      std::exchange(control.next_distributed, std::nullopt);
  if (g_window.load(std::memory_order_relaxed) != 0 && !control.implicit) {
    throw std::logic_error(
        "paddle_prof: the profiler is already enabled; call DisableProfiler() first");
  }
  if (GpuTracer* implicit_gpu = TakeGpuTracer(control)) implicit_gpu->Stop();
  Clock::Init();  // before the GPU tracer, which maps its clock onto this one
  GpuTracer* gpu = StartGpuTracer(state);
  // An implicit profile still running is dropped: the program's own profiler takes over.
  control.implicit = implicit;
  control.state = state;
  control.gpu = gpu;
  g_gpu_tracer.store(gpu, std::memory_order_relaxed);
  control.snapshot_path.clear();
  control.process = ThisProcess();
  control.clock_offset_ns = 0;
  control.clock_warning.clear();
  if (distributed) {  // before the capture opens: its directory may name the rank
    control.process.rank = distributed->rank;
    control.process.world_size = distributed->world_size;
    control.process.backend = distributed->backend;
    control.clock_offset_ns = distributed->offset_ns;
    control.clock_warning = distributed->warning;
  }
  control.oom.path.clear();
  control.oom.dumped = false;
  control.oom.failures_after = 0;
  if (!implicit) control.launcher_report.reset();  // the program's window: its own options
  // A child's profile replaced by the child's own profiler: its parent gets nothing.
  if (!control.children.own_path.empty()) {
    RemoveChildMarker(control.children.own_path, std::exchange(control.children.marker, -1));
  }
  control.children.own_path.clear();
  control.children.follow = FLAGS_paddle_prof_follow_children;
  control.children.dir.clear();
  control.children.launched.clear();
  control.flight.keep_last_steps = std::max(FLAGS_paddle_prof_keep_last_steps, 0);
  control.capture.dir = FLAGS_paddle_prof_capture_dir;
  RecordStacks(FLAGS_paddle_prof_record_stacks);
  g_memory_categories.store(false, std::memory_order_relaxed);  // a reset keeps it
  g_plain_op_names.store(false, std::memory_order_relaxed);
  if (child_of != nullptr) BecomeChildLocked(control, *child_of);
  OpenWindow(control);
  control.first_window = control.last_window;
  control.enable_unix_ns = control.start_unix_ns;
  CatchSnapshotSignalFromFlags();
}

namespace {

std::string ClockWarning(const Collection& c, uint64_t window_ns) {
  if (!Clock::UsesTsc() || window_ns < 100000000 || c.end_tick <= c.start_tick) return "";
  const double window_rate =
      static_cast<double>(window_ns) / static_cast<double>(c.end_tick - c.start_tick);
  const double drift = window_rate / c.ns_per_tick - 1;
  if (std::fabs(drift) < 1e-3) return "";
  return "the TSC and CLOCK_MONOTONIC drifted apart by " + FormatFixed(drift * 100, 3) +
         "% during the window; times may be off by as much.";
}

// The open window's Collection up to `c->end_tick`, which the caller has set with the
// steps and the GPU capture. `options` says whether a trace will be written beside the
// report.
void CollectLocked(const Control& control, uint64_t window, uint64_t end_ns,
                   const ReportOptions& options, Collection* c) {
  c->state = control.state;
  c->start_tick = control.start_tick;
  c->ns_per_tick = Clock::NsPerTick();
  c->places = PlaceWindowFigures();
  c->modules = NotedModules();
  const TrackerCounts now = TrackerCountsNow();
  const TrackerCounts& then = control.tracker_at_start;
  c->tracker = {now.untracked - then.untracked, now.oversized - then.oversized,
                now.live_again - then.live_again};
  if (std::string w = ClockWarning(*c, end_ns - control.start_ns); !w.empty()) {
    c->warnings.push_back(std::move(w));
  }
  if (!control.capture.warning.empty()) c->warnings.push_back(control.capture.warning);
  if (const int64_t failed =
          EventBuffer::CaptureChunksFailed() - control.capture_failed_at_start;
      failed > 0) {
    c->warnings.push_back("capture_dir '" + control.capture.dir + "': " +
                          std::to_string(failed) +
                          " thread(s) could not add a record chunk there (a full disk?): their "
                          "later records are in this report but not in the capture.");
  }
  if (const int64_t missed =
          MappingsNotFollowedByPreload() - control.mappings_not_followed_at_start;
      missed > 0) {
    c->warnings.push_back(std::to_string(missed) +
                          " mapping call(s) not followed: more anonymous mappings than the "
                          "65,536 regions the account holds, or a signal handler's mapping "
                          "while its thread edited it; mmap_reserved_bytes and "
                          "mmap_resident_bytes leave them out.");
  }
  if (!control.clock_warning.empty()) c->warnings.push_back(control.clock_warning);
  KeepToTheKeptSteps(control, c);  // after the clock's check, which needs the whole window
  c->process = control.process;
  // A flight recorder's report starts after the window did.
  c->clock.unix_ns =
      control.start_unix_ns +
      std::llround(static_cast<double>(c->start_tick - control.start_tick) * c->ns_per_tick);
  c->clock.offset_ns = control.clock_offset_ns;
  CollectThreads(window, control.first_window, KeptStarts(control), c);
  ScanRecords(c, /*calls=*/options.profile_path.empty());  // or beside the trace (record_scan.h)
}

// The trace, started before the report is built, which it goes on beside.
void StartTrace(const Collection& c, const ReportOptions& options,
                std::optional<TraceWriting>* trace) {
  if (!options.profile_path.empty()) {
    trace->emplace(c, ExpandPathFields(options.profile_path, c.process));
  }
}

Report ReportOf(const Collection& c, const ReportOptions& options) {
  std::optional<TraceWriting> trace;
  StartTrace(c, options, &trace);
  Report report = BuildReport(c, options);
  if (trace) WriteProfileFiles(&*trace, &report);
  return report;
}

uint64_t OpenWindowOrThrow() {
  const uint64_t window = g_window.load(std::memory_order_relaxed);
  if (window == 0) throw std::logic_error("paddle_prof: the profiler is not enabled");
  return window;
}

}  // namespace

Report StopLocked(Control& control, const ReportOptions& given) {
  const uint64_t window = OpenWindowOrThrow();
  ReportOptions options = given;
  if (!control.children.own_path.empty()) options.profile_path = control.children.own_path;
  const std::string children_dir = control.children.follow ? ChildrenDirLocked(control) : "";
  const int64_t start_unix_ns = control.enable_unix_ns;
  Collection c;
  c.end_tick = Clock::Now();
  const uint64_t end_ns = MonotonicNs();
  g_window.store(0, std::memory_order_release);
  control.implicit = false;
  EndCapture(control, CaptureFiles::kRemove);  // the mapped records stay readable
  if (GpuTracer* gpu = TakeGpuTracer(control)) {
    c.gpu_traced = true;
    c.gpu = gpu->Stop();
  }
  c.steps = StepMarks(control.steps);
  control.steps.clear();
  c.failures_after_oom = control.oom.failures_after;
  c.memory_events = std::move(control.spare_memory_events);
  CollectLocked(control, window, end_ns, options, &c);
  RecordStacks(false);  // after the collection, which says whether it recorded them
  Report report;
  {
    std::optional<TraceWriting> trace;
    StartTrace(c, options, &trace);
    report = BuildReport(c, options);
    if (!children_dir.empty()) {
      MergeArrivedChildren(children_dir, start_unix_ns, control.children.launched,
                           options.per_process, &report);
    }
    if (trace) WriteProfileFiles(&*trace, &report);  // the summary with the children
  }
  if (!control.children.own_path.empty()) {
    RemoveChildMarker(control.children.own_path, std::exchange(control.children.marker, -1));
    control.children.own_path.clear();
  }
  // Kept for the next stop, up to a bound: a window's memory events come back as pages
  // already touched.
  constexpr size_t kSpareBytes = size_t{64} << 20;
  if (c.memory_events.capacity() * sizeof(MemoryEvent) <= kSpareBytes) {
    control.spare_memory_events = std::move(c.memory_events);
  }
  return report;
}

// The records are read in place while their threads go on appending: each thread's
// buffer is read up to the size it had published by then, and no thread rewinds it
// while the profiler's lock keeps the window open.
Report SnapshotLocked(const Control& control, const ReportOptions& options,
                      const OutOfMemory* oom) {
  const uint64_t window = OpenWindowOrThrow();
  Collection c;
  c.end_tick = Clock::Now();
  const uint64_t end_ns = MonotonicNs();
  c.snapshot = true;
  if (oom != nullptr) c.oom = *oom;
  c.steps = StepMarks(control.steps);
  if (control.gpu != nullptr) {
    c.gpu_traced = true;  // GPU columns, empty: CUPTI hands its records over at the stop
    c.warnings.push_back("GPU work is reported when the window stops, not in snapshots.");
  }
  CollectLocked(control, window, end_ns, options, &c);
  return ReportOf(c, options);
}

Report StopProfiler(const ReportOptions& options) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return StopLocked(control, options);
}

void SetMemoryCategories(bool on, bool plain_op_names) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  // What an earlier window was told of its blocks is not this one's: a parameter of a
  // model it does not call is no parameter here.
  if (on && !g_memory_categories.load(std::memory_order_relaxed)) LiveBlocks::ClearKinds();
  g_memory_categories.store(on, std::memory_order_relaxed);
  g_plain_op_names.store(on && plain_op_names, std::memory_order_relaxed);
}

void SetDistributedInfo(int rank, int world_size, const std::string& backend,
                        std::optional<int64_t> offset_ns, const std::string& warning) {
  if (rank < 0 || world_size <= rank) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " of a world of " +
                                std::to_string(world_size));
  }
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  control.next_distributed =
      Control::Distributed{rank, world_size, backend, offset_ns.value_or(0), warning};
}

Report SnapshotProfiler(const ReportOptions& options) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return SnapshotLocked(control, options);
}

}  // namespace internal

using internal::Clock;
using internal::Control;
using internal::DropStepsPastTheLast;
using internal::EnableLocked;
using internal::g_steps_in_window;
using internal::g_window;
using internal::GetControl;
using internal::OpenWindow;
using internal::OptionsFromApi;

void EnableProfiler(ProfilerState state) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  EnableLocked(control, state, /*implicit=*/false);
}

void ResetProfiler() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  if (control.gpu != nullptr) control.gpu->Discard();
  OpenWindow(control);
}

Report StopProfiler(EventSortingKey key, const std::string& profile_path) {
  return internal::StopProfiler(OptionsFromApi(key, profile_path));
}

Report SnapshotProfiler(EventSortingKey key, const std::string& profile_path) {
  return internal::SnapshotProfiler(OptionsFromApi(key, profile_path));
}

Report DisableProfiler(EventSortingKey key, const std::string& profile_path) {
  Report report = StopProfiler(key, profile_path);
  if (report.process.parent_pid) return report;  // a followed child's: it prints nothing
  std::fputs(report.Table(false, FLAGS_paddle_prof_row_limit).c_str(), stdout);
  std::fflush(stdout);
  return report;
}

void MarkStep() { internal::MarkStepOf(std::nullopt); }

void MarkStep(int64_t num_samples) {
  if (num_samples < 0) {
    throw std::invalid_argument("num_samples must be >= 0; got " + std::to_string(num_samples));
  }
  internal::MarkStepOf(num_samples);
}

void NoteModule(const std::string& path, const std::string& type, int64_t params,
                int64_t param_bytes) {
  internal::NativeGuard profiler_memory;
  internal::NoteModuleInfo({path, type, params, param_bytes});
}

namespace internal {

void MarkStepOf(std::optional<int64_t> samples) {
  if (!IsProfilerEnabled()) return;
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  // Read before the profiler's lock: the preload's mapping reader walks every mapping
  // (mincore), which no other entry point should wait behind.
  const internal::ProcessFigures process = internal::ReadProcessMemory();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  internal::StepRecord& step = control.steps.emplace_back();
  step.tick = Clock::Now();
  step.places = internal::ClosePlaceStep();
  step.process = process;
  step.samples = samples;
  g_steps_in_window.fetch_add(1, std::memory_order_relaxed);
  if (control.capture.open != nullptr) internal::CaptureStep(control, step.Mark());
  if (control.flight.keep_last_steps > 0) DropStepsPastTheLast(control);
}

}  // namespace internal
}  // namespace paddle_prof
