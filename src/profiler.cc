// Opening and closing profiling windows, and collecting what the threads recorded.
#include "paddle_prof/profiler.h"

#include <glog/logging.h>
#include <pthread.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "atomic_file.h"
#include "chrome_trace.h"
#include "clock.h"
#include "collection.h"
#include "flags.h"
#include "gpu_correlation.h"
#include "gpu_tracer.h"
#include "live_block_table.h"
#include "memory_timeline.h"
#include "memory_tracker.h"
#include "native_guard.h"
#include "place_registry.h"
#include "process_memory.h"
#include "profiler_control.h"
#include "recorder_registry.h"
#include "report_builder.h"
#include "termination_signals.h"

namespace paddle_prof {

namespace internal {
std::atomic<uint64_t> g_window{0};
}  // namespace internal

namespace {

using internal::Clock;
using internal::g_window;

std::atomic<int> g_steps_in_window{0};
std::atomic<bool> g_memory_timeline{true};

struct Control {
  std::mutex mu;  // serialises enable, reset, disable and step marks
  uint64_t last_window = 0;
  uint64_t first_window = 0;  // of this EnableProfiler(): resets open later ones
  bool implicit = false;      // started from FLAGS_paddle_prof_state or by a launcher
  std::optional<internal::ImplicitReport> launcher_report;  // else the flags say
  ProfilerState state = ProfilerState::kDisabled;
  internal::GpuTracer* gpu = nullptr;  // tracing the GPU in this window
  uint64_t start_tick = 0;
  uint64_t start_ns = 0;
  std::vector<internal::StepMark> steps;
  internal::TrackerCounts tracker_at_start;
};

Control& GetControl() {
  static auto* control = new Control;  // leaked: the exit handler may still use it
  return *control;
}

// Caller holds control.mu. Release: pairs with the acquire in every recorder, so the
// collector of the previous window is done before any thread rewinds its buffer.
void OpenWindow(Control& control) {
  internal::RecorderRegistry::Get().ReleaseRetiredNames();
  control.steps.clear();
  g_steps_in_window.store(0, std::memory_order_relaxed);
  g_memory_timeline.store(FLAGS_paddle_prof_memory_timeline, std::memory_order_relaxed);
  control.tracker_at_start = internal::TrackerCountsNow();
  internal::OpenPlaceWindow();
  control.start_ns = internal::MonotonicNs();
  control.start_tick = Clock::Now();
  g_window.store(++control.last_window, std::memory_order_release);
}

// The GPU tracer for `state`, started; nullptr for kCPU. Throws std::runtime_error
// saying why the GPU cannot be profiled.
internal::GpuTracer* StartGpuTracer(ProfilerState state) {
  if (state == ProfilerState::kDisabled) {
    throw std::invalid_argument("paddle_prof: EnableProfiler needs kCPU, kCUDA or kAll");
  }
  if (state == ProfilerState::kCPU) return nullptr;
  internal::GpuTracer* tracer = internal::GpuTracerToUse();
  if (tracer == nullptr) {
    throw std::runtime_error(
        "paddle_prof: cannot profile the GPU: this build of paddle_prof has no CUDA support "
        "(build it where CMake finds the CUDA toolkit)");
  }
  tracer->Start();
  return tracer;
}

// Hands the GPU window's tracer back: scopes stop pushing ids to it.
internal::GpuTracer* TakeGpuTracer(Control& control) {
  internal::g_gpu_tracer.store(nullptr, std::memory_order_relaxed);
  return std::exchange(control.gpu, nullptr);
}

void EnableLocked(Control& control, ProfilerState state, bool implicit) {
  if (g_window.load(std::memory_order_relaxed) != 0 && !control.implicit) {
    throw std::logic_error(
        "paddle_prof: the profiler is already enabled; call DisableProfiler() first");
  }
  if (internal::GpuTracer* implicit_gpu = TakeGpuTracer(control)) implicit_gpu->Stop();
  Clock::Init();  // before the GPU tracer, which maps its clock onto this one
  internal::GpuTracer* gpu = StartGpuTracer(state);
  // An implicit profile still running is dropped: the program's own profiler takes over.
  control.implicit = implicit;
  control.state = state;
  control.gpu = gpu;
  internal::g_gpu_tracer.store(gpu, std::memory_order_relaxed);
  OpenWindow(control);
  control.first_window = control.last_window;
}

std::string ClockWarning(const internal::Collection& c, uint64_t window_ns) {
  if (!Clock::UsesTsc() || window_ns < 100000000 || c.end_tick <= c.start_tick) return "";
  const double window_rate =
      static_cast<double>(window_ns) / static_cast<double>(c.end_tick - c.start_tick);
  const double drift = window_rate / c.ns_per_tick - 1;
  if (std::fabs(drift) < 1e-3) return "";
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "the TSC and CLOCK_MONOTONIC drifted apart by %.3f%% during the window; times "
                "may be off by as much.",
                drift * 100);
  return buf;
}

// What one thread recorded in its window: its records (read in place) and its counts.
void CollectRecorder(const internal::ThreadRecorder& r, internal::Collection* c) {
  const size_t size = r.buffer().Size();  // before the calls begun, which it bounds
  const internal::RecorderCounters& counters = r.counters();
  const int64_t begun = r.BegunInWindow();
  c->forced_closes += counters.forced_closes.load(std::memory_order_relaxed);
  c->foreign_ends += counters.foreign_ends.load(std::memory_order_relaxed);
  c->dropped += counters.dropped.load(std::memory_order_relaxed);
  c->dropped_memory += counters.dropped_memory.load(std::memory_order_relaxed);
  c->lost_places += counters.lost_places.load(std::memory_order_relaxed);
  for (int place = 0; place < static_cast<int>(c->places.size()); ++place) {
    const internal::RootUsage& root = r.root_usage(place);
    internal::NoEventUsage u;
    u.thread = r.index();
    u.place = place;
    u.stats.peak_bytes = root.peak.load(std::memory_order_relaxed);
    u.stats.alloc_bytes = root.alloc_bytes.load(std::memory_order_relaxed);
    u.stats.alloc_count = root.alloc_count.load(std::memory_order_relaxed);
    u.stats.free_bytes = root.free_bytes.load(std::memory_order_relaxed);
    u.stats.free_count = root.free_count.load(std::memory_order_relaxed);
    if (u.stats.alloc_count > 0 || u.stats.free_count > 0) c->no_event.push_back(u);
  }
  c->threads.push_back({r.index(), r.os_tid(), r.thread_name(), &r.buffer(), size,
                        begun - counters.dropped.load(std::memory_order_relaxed) -
                            counters.abandoned.load(std::memory_order_relaxed)});
}

// The trace at `path`, the summary beside it, each whole or not at all. A file that
// cannot be written is a warning of the report (the summary carries the trace's), and a
// line on stderr.
void WriteProfileFiles(const internal::Collection& c, const std::string& path, Report* report) {
  std::string error;
  if (!internal::WriteChromeTrace(c, path, &error)) {
    report->warnings.push_back("cannot write the trace to '" + path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
  const std::string summary_path = path + ".summary.json";
  if (!internal::WriteFileAtomically(summary_path, report->ToJson(), &error)) {
    report->warnings.push_back("cannot write the summary to '" + summary_path + "': " + error +
                               "; the file was not written.");
    LOG(ERROR) << "paddle_prof: " << report->warnings.back();
  }
}

Report StopLocked(Control& control, EventSortingKey key, const std::string& profile_path) {
  const uint64_t window = g_window.load(std::memory_order_relaxed);
  if (window == 0) throw std::logic_error("paddle_prof: the profiler is not enabled");
  internal::Collection c;
  c.end_tick = Clock::Now();
  const uint64_t end_ns = internal::MonotonicNs();
  g_window.store(0, std::memory_order_release);
  control.implicit = false;
  if (internal::GpuTracer* gpu = TakeGpuTracer(control)) {
    c.gpu_traced = true;
    c.gpu = gpu->Stop();
  }
  c.state = control.state;
  c.start_tick = control.start_tick;
  c.ns_per_tick = Clock::NsPerTick();
  c.steps = std::move(control.steps);
  c.places = internal::ClosePlaceWindow();
  const internal::TrackerCounts now = internal::TrackerCountsNow();
  const internal::TrackerCounts& then = control.tracker_at_start;
  c.tracker = {now.untracked - then.untracked, now.oversized - then.oversized,
               now.live_again - then.live_again};
  if (std::string w = ClockWarning(c, end_ns - control.start_ns); !w.empty()) {
    c.warnings.push_back(std::move(w));
  }

  std::unique_lock<std::mutex> registry_lock;
  for (const internal::ThreadRecorder* r :
       internal::RecorderRegistry::Get().LockAll(&registry_lock)) {
    if (r->window() == window) CollectRecorder(*r, &c);
    // Calls begun before a reset of this profiler and still open: left out, like the
    // open calls of this window, whether or not their thread acted since the reset.
    c.open_before_reset += r->OpenScopesBegunIn(control.first_window, window);
  }
  internal::LiveBlocks::ForEach([&c, window](const internal::LiveBlock& block) {
    if (block.window == window) c.live_blocks.push_back(block);
  });
  c.buffer_chunks = internal::EventBuffer::ChunksInUse();
  c.memory_events = internal::GatherMemoryEvents(c);  // sorted once, for report and trace
  c.gpu_correlation = internal::CorrelateGpu(c);

  Report report = internal::BuildReport(c, key, FLAGS_paddle_prof_per_thread);
  if (!profile_path.empty()) WriteProfileFiles(c, profile_path, &report);
  return report;
}

// Read when the profile ends: a program that parses its command line sets them late.
internal::ImplicitReport ReportFromFlags() {
  internal::ImplicitReport report;
  try {
    report.key = ParseSortingKey(FLAGS_paddle_prof_sorted_key);
  } catch (const std::invalid_argument& e) {
    LOG(ERROR) << "paddle_prof: FLAGS_paddle_prof_sorted_key: " << e.what() << "; using 'total'";
  }
  report.path = FLAGS_paddle_prof_path;
  report.per_thread = FLAGS_paddle_prof_per_thread;
  return report;
}

// At exit, or on a signal that ends the program: the implicit profile's table on
// stdout and its files, if it is still running.
void StopImplicitProfile() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (!control.implicit || g_window.load(std::memory_order_relaxed) == 0) return;
  const internal::ImplicitReport out = control.launcher_report.value_or(ReportFromFlags());
  const bool per_thread = std::exchange(FLAGS_paddle_prof_per_thread, out.per_thread);
  try {
    const Report report = StopLocked(control, out.key, out.path);
    std::fputs(report.Table().c_str(), stdout);
    std::fflush(stdout);
  } catch (const std::exception& e) {  // the program is ending: say why there is no report
    LOG(ERROR) << "paddle_prof: cannot report the whole-program profile: " << e.what();
  }
  FLAGS_paddle_prof_per_thread = per_thread;
}

// A child must not report its parent's implicit profile nor write its files: the
// window is dropped, silently. Runs with every lock held (see LockAllForFork).
void DropImplicitProfileInChild() {
  Control& control = GetControl();
  internal::ReleaseTerminationSignalsInChild();
  if (!control.implicit) return;
  control.implicit = false;
  TakeGpuTracer(control);  // the parent's: a GPU context does not carry over fork()
  g_window.store(0, std::memory_order_release);
}

// fork() copies a lock another thread holds as held, forever, in the child: the fork
// waits until each of the library's locks is free and holds them across it, in the
// order they nest (the profiler's outermost).
void LockAllForFork() {
  GetControl().mu.lock();
  internal::LockGpuTracerForFork();
  internal::RecorderRegistry::Get().LockForFork();
  internal::LockPlaceRegistryForFork();
  internal::LiveBlocks::LockForFork();
}

void UnlockAllAfterFork() {
  internal::LiveBlocks::UnlockAfterFork();
  internal::UnlockPlaceRegistryAfterFork();
  internal::RecorderRegistry::Get().UnlockAfterFork();
  internal::UnlockGpuTracerAfterFork();
  GetControl().mu.unlock();
}

void AfterForkInChild() {
  DropImplicitProfileInChild();
  UnlockAllAfterFork();
}

const bool g_fork_hook = [] {
  pthread_atfork(LockAllForFork, UnlockAllAfterFork, AfterForkInChild);
  return true;
}();

}  // namespace

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
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return StopLocked(control, key, profile_path);
}

Report DisableProfiler(EventSortingKey key, const std::string& profile_path) {
  Report report = StopProfiler(key, profile_path);
  std::fputs(report.Table().c_str(), stdout);
  std::fflush(stdout);
  return report;
}

void MarkStep() {
  if (!IsProfilerEnabled()) return;
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  // Read before the profiler's lock, never under it: the preload's mapping reader takes a
  // lock that fork() takes first (its handlers run in the reverse order of registration).
  std::map<std::string, int64_t> process = internal::ReadProcessMemory();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  internal::StepMark& step = control.steps.emplace_back();
  step.tick = Clock::Now();
  internal::ClosePlaceStep(&step.peak_bytes, &step.end_bytes);
  step.process = std::move(process);
  g_steps_in_window.fetch_add(1, std::memory_order_relaxed);
}

namespace internal {

bool EnableImplicitProfiler(ProfilerState state, const ImplicitReport& report) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) return false;
  EnableLocked(control, state, /*implicit=*/true);
  control.launcher_report = report;
  CatchTerminationSignals({SIGTERM, SIGHUP}, StopImplicitProfile);
  return true;
}

bool ImplicitProfilerRunning() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return control.implicit && g_window.load(std::memory_order_relaxed) != 0;
}

int StepsInWindow() { return g_steps_in_window.load(std::memory_order_relaxed); }
bool MemoryTimelineOn() { return g_memory_timeline.load(std::memory_order_relaxed); }

namespace {

// A program the profiled one starts inherits its environment, these flags with it: it
// runs unprofiled, so that it neither prints a second report nor overwrites this one's
// files. (The same process after exec() keeps its pid, and its profile.)
bool StartedByAProfiledProgram() {
  constexpr char kOwner[] = "PADDLE_PROF_IMPLICIT_PID";
  const std::string self = std::to_string(getpid());
  const char* owner = std::getenv(kOwner);
  if (owner != nullptr && self != owner) return true;
  setenv(kOwner, self.c_str(), /*overwrite=*/1);
  return false;
}

}  // namespace

void StartImplicitProfiler() {
  if (StartedByAProfiledProgram()) return;
  ProfilerState state;
  try {
    state = ParseProfilerState(FLAGS_paddle_prof_state);
    Control& control = GetControl();
    internal::NativeGuard profiler_memory;
    std::lock_guard<std::mutex> lock(control.mu);
    EnableLocked(control, state, /*implicit=*/true);
    control.launcher_report.reset();
  } catch (const std::exception& e) {
    LOG(ERROR) << "paddle_prof: not profiling this program (FLAGS_paddle_prof_state='"
               << FLAGS_paddle_prof_state << "'): " << e.what();
    return;
  }
  CatchTerminationSignals({SIGTERM, SIGINT, SIGHUP}, StopImplicitProfile);
  // At exit, before the flags it reads are destroyed: a static's destructor is
  // registered as they are, so it runs first under every runtime (with std::atexit,
  // ThreadSanitizer's ran the flags' destructors first).
  static const struct ReportAtExit {
    ~ReportAtExit() { StopImplicitProfile(); }
  } report_at_exit;
}

}  // namespace internal

}  // namespace paddle_prof
