// The window control: opening, resetting and closing profiling windows (explicit, or
// the implicit whole-program profile), step marks, and the library's locks across
// fork(). Closing a window hands over to the collector, the report builder and the
// profile files.
#include "paddle_prof/profiler.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "atomic_file.h"
#include "call_stacks.h"
#include "capture_files.h"
#include "caught_signals.h"
#include "child_profiles.h"
#include "clock.h"
#include "collection.h"
#include "collector.h"
#include "flags.h"
#include "gpu_tracer.h"
#include "live_block_table.h"
#include "memory_tracker.h"
#include "native_guard.h"
#include "native_stacks.h"
#include "number_format.h"
#include "place_registry.h"
#include "process_identity.h"
#include "process_memory.h"
#include "profile_files.h"
#include "profiler_control.h"
#include "recorder_registry.h"
#include "report_builder.h"
#include "report_merge.h"
#include "report_options.h"
#include "window_state.h"

namespace paddle_prof {

namespace {

using internal::Clock;
using internal::g_memory_timeline;
using internal::g_steps_in_window;
using internal::g_window;

struct Control {
  std::mutex mu;  // serialises enable, reset, disable and step marks
  std::vector<internal::MemoryEvent> spare_memory_events;  // the last stop's, for the next
  uint64_t last_window = 0;
  uint64_t first_window = 0;  // of this EnableProfiler(): resets open later ones
  bool implicit = false;      // started from FLAGS_paddle_prof_state or by a launcher
  std::optional<internal::ReportOptions> launcher_report;  // else the flags say
  ProfilerState state = ProfilerState::kDisabled;
  internal::GpuTracer* gpu = nullptr;  // tracing the GPU in this window
  uint64_t start_tick = 0;
  uint64_t start_ns = 0;
  int64_t start_unix_ns = 0;   // CLOCK_REALTIME at start_tick
  int64_t enable_unix_ns = 0;  // likewise at EnableProfiler(), which resets leave
  // Who records the window: set as it opens (a child's role and parent stay).
  ProcessInfo process;
  int64_t clock_offset_ns = 0;  // to rank 0's clock, when measured
  std::string clock_warning;    // why it was not
  // Where the next window stands in torch.distributed (SetDistributedInfo), taken as it
  // opens.
  struct Distributed {
    int rank, world_size;
    std::string backend;
    int64_t offset_ns;
    std::string warning;
  };
  std::optional<Distributed> next_distributed;
  std::vector<internal::StepMark> steps;
  internal::TrackerCounts tracker_at_start;
  int64_t capture_failed_at_start = 0;  // EventBuffer::CaptureChunksFailed()
  int64_t mappings_not_followed_at_start = 0;  // MappingsNotFollowedByPreload()
  // A flight recorder (keep_last_steps): only the last steps' records are kept.
  int keep_last_steps = 0;  // 0: every step
  int64_t steps_dropped = 0;
  std::optional<internal::StepMark> before_kept;  // closed the step before the oldest kept
  // Per recorder, where each of the last keep_last_steps + 1 steps began.
  std::unordered_map<const internal::ThreadRecorder*, std::deque<internal::KeptStart>> step_starts;
  std::string snapshot_path;  // where the snapshot signal writes, when the caller said
  // Out of memory (oom_dump.cc): one dump per EnableProfiler(), resets included.
  std::string oom_path;  // the caller's, else the default
  bool oom_dumped = false;
  int64_t failures_after_oom = 0;
  int snapshots_written = 0;  // by the snapshot signal, in this process
  // capture_dir: where each window of this profiler captures (empty: nowhere), the
  // capture of the open window (null: none), and why it has none when it was asked for.
  std::string capture_dir;
  const internal::CaptureTarget* capture = nullptr;
  std::string capture_warning;
  // Every capture so far, kept: a recorder may still read one that ended (40 bytes each).
  std::deque<internal::CaptureTarget> captures;
  // follow_children: whether processes started in the window profile themselves, and
  // where they write (settled once per EnableProfiler(), when first needed, so that every
  // fork and the stop agree). Children started since EnableProfiler() are merged, resets
  // or not: a reset cannot reach them. In such a child, child_path is where its own
  // window's files go, and nowhere else.
  bool follow_children = true;
  std::string children_dir;
  std::string child_path;
  int child_marker = -1;                   // holds the child's marker locked while it profiles
  std::vector<int64_t> launched_children;  // spawned since EnableProfiler() (NoteChildLaunched)
};

Control& GetControl() {
  static auto* control = new Control;  // leaked: the exit handler may still use it
  return *control;
}

// ---- The capture (capture_files.h): the window control writes the window's meta,
// steps and mappings; the recorders map their chunks and log their names. ----

std::string ReadFileWhole(const char* path) {
  std::string bytes;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bytes;
  char buffer[65536];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

bool WriteCaptureFile(const std::string& dir, const char* name, std::string_view bytes,
                      std::string* error) {
  internal::AtomicFile file(internal::CaptureFile(dir, name));
  file.Write(bytes);
  return file.Commit(error);
}

// The window's meta (rewritten whole: places appear late) and the process's mappings
// (libraries load late), at open and at each step mark.
bool WriteCaptureMeta(const Control& control, std::string* error) {
  const internal::CaptureTarget& capture = *control.capture;
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.17g", Clock::NsPerTick());
  std::string meta = "paddle_prof capture 1\nwindow " + std::to_string(capture.window) + "\npid " +
                     std::to_string(getpid()) + "\nstate " + ProfilerStateName(control.state) +
                     "\nstart_tick " + std::to_string(control.start_tick) + "\nns_per_tick " +
                     rate + "\nunix_ns " + std::to_string(control.start_unix_ns) + "\ntimeline " +
                     (internal::MemoryTimelineOn() ? "1" : "0") + "\nhost " + control.process.host +
                     "\n";
  if (control.process.rank) {
    meta += "rank " + std::to_string(*control.process.rank) + " " +
            std::to_string(control.process.world_size.value_or(0)) + "\n";
  }
  for (const PlaceSummary& p : internal::PlaceWindowFigures()) {
    meta += "place " + std::to_string(p.start_bytes) + " " + std::to_string(p.peak_bytes) + " " +
            std::to_string(p.end_bytes) + " " + std::to_string(p.untracked_frees) + " " + p.place +
            "\n";
  }
  return WriteCaptureFile(capture.dir, "maps", ReadFileWhole("/proc/self/maps"), error) &&
         WriteCaptureFile(capture.dir, "meta", meta, error);
}

// One step mark, appended: its tick, then the figures StepMark holds.
void AppendCaptureStep(const Control& control, const internal::StepMark& step) {
  std::string line = std::to_string(step.tick);
  for (const auto& [figures, tag] :
       {std::pair{&step.peak_bytes, "peak"}, std::pair{&step.end_bytes, "end"},
        std::pair{&step.process, "process"}}) {
    for (const auto& [name, value] : *figures) {
      line += std::string("\t") + tag + " " + std::to_string(value) + " " + name;
    }
  }
  line += "\n";
  const std::string path = internal::CaptureFile(control.capture->dir, "steps");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line.data(), line.size()) < 0) {  // one write: a kill leaves whole lines
    LOG_FIRST_N(WARNING, 1) << "paddle_prof: " << path << ": " << std::strerror(errno);
  }
  close(fd);
}

enum class CaptureFiles { kKeep, kKeepChunks, kRemove };

// `dir` made absolute (the program may change its working directory mid-window); as
// given when it does not exist.
std::string AbsoluteDir(const std::string& dir) {
  char* real = realpath(dir.c_str(), nullptr);
  if (real == nullptr) return dir;
  std::string absolute = real;
  std::free(real);
  return absolute;
}

// Ends the open window's capture: recorders still writing its chunks write into files
// that are gone, unless a reset keeps them for the next window in the same directory. A
// window that stops normally leaves no capture behind.
void EndCapture(Control& control, CaptureFiles files) {
  if (control.capture == nullptr) return;
  internal::g_capture.store(nullptr, std::memory_order_release);
  internal::CloseCaptureNames();
  if (files != CaptureFiles::kKeep) {
    internal::RemoveCaptureFiles(control.capture->dir, files == CaptureFiles::kKeepChunks);
  }
  control.capture = nullptr;  // kept in control.captures: a recorder may still read it
}

// Starts the capture of window `window` (about to open) in control.capture_dir; on
// failure, says why in control.capture_warning (and on stderr) and the window is
// recorded in memory only.
void StartCapture(Control& control, uint64_t window, bool fresh) {
  control.capture_warning.clear();
  if (control.capture_dir.empty()) return;
  const std::string dir = internal::ExpandPathFields(control.capture_dir, control.process);
  std::string error;
  if (control.keep_last_steps > 0) {
    error = "a flight recorder (keep_last_steps) reuses its memory and cannot be captured";
  } else if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    error = std::strerror(errno);
  } else {
    if (fresh) internal::RemoveCaptureFiles(dir);  // a capture left by a process that died
    control.capture =
        &control.captures.emplace_back(internal::CaptureTarget{window, AbsoluteDir(dir)});
    const std::string& absolute = control.capture->dir;
    if (!internal::OpenCaptureNames(absolute, &error) ||
        !WriteCaptureFile(absolute, "steps", "", &error) || !WriteCaptureMeta(control, &error)) {
      EndCapture(control, CaptureFiles::kRemove);
    }
  }
  if (control.capture == nullptr) {
    control.capture_warning = "capture_dir '" + dir + "': cannot capture there (" + error +
                              "); the window was recorded in memory only.";
    LOG(WARNING) << "paddle_prof: " << control.capture_warning;
    return;
  }
  internal::g_capture.store(control.capture, std::memory_order_release);
}

// Caller holds control.mu. Release: pairs with the acquire in every recorder, so the
// collector of the previous window is done before any thread rewinds its buffer.
void OpenWindow(Control& control) {
  internal::RecorderRegistry::Get().ReleaseRetiredNames();
  control.steps.clear();
  control.steps_dropped = 0;
  control.before_kept.reset();
  control.step_starts.clear();
  g_steps_in_window.store(0, std::memory_order_relaxed);
  g_memory_timeline.store(FLAGS_paddle_prof_memory_timeline, std::memory_order_relaxed);
  control.tracker_at_start = internal::TrackerCountsNow();
  control.capture_failed_at_start = internal::EventBuffer::CaptureChunksFailed();
  control.mappings_not_followed_at_start = internal::MappingsNotFollowedByPreload();
  internal::OpenPlaceWindow();
  control.start_ns = internal::MonotonicNs();
  uint64_t unix_ns = 0;
  Clock::ReadPaired([] { return static_cast<uint64_t>(internal::RealtimeNs()); }, &unix_ns,
                    &control.start_tick);
  control.start_unix_ns = static_cast<int64_t>(unix_ns);
  // A reset's records go; its recorders' chunk files stay for the next window's.
  const bool same_dir = control.capture != nullptr && !control.capture_dir.empty() &&
                        control.capture->dir == AbsoluteDir(internal::ExpandPathFields(
                                                    control.capture_dir, control.process));
  EndCapture(control, same_dir ? CaptureFiles::kKeepChunks : CaptureFiles::kRemove);
  StartCapture(control, control.last_window + 1, /*fresh=*/!same_dir);
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

// Read when the profile ends: a program that parses its command line sets them late.
internal::ReportOptions ReportFromFlags() {
  internal::ReportOptions report;
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

Report SnapshotLocked(const Control& control, const internal::ReportOptions& options,
                      const OutOfMemory* oom = nullptr);

// The C++ API's options: per-thread rows from the flag, the rest as given.
internal::ReportOptions OptionsFromApi(EventSortingKey key, const std::string& profile_path) {
  internal::ReportOptions options;
  options.key = key;
  options.per_thread = FLAGS_paddle_prof_per_thread;
  options.per_process = FLAGS_paddle_prof_per_process;
  options.profile_path = profile_path;
  return options;
}

// The open window's profile path as its caller said: the Python profiler's, else the
// implicit profile's or FLAGS_paddle_prof_path (in `options`); "" when none did.
std::string WindowProfilePath(const Control& control, const internal::ReportOptions& options) {
  return !control.snapshot_path.empty() ? control.snapshot_path : options.profile_path;
}

// The open window's children directory, beside the profile path known by now: the
// Python profiler's, or the implicit profile's (an explicit C++ window names its path
// only as it stops).
const std::string& ChildrenDirLocked(Control& control) {
  if (control.children_dir.empty()) {
    std::string path = control.snapshot_path;
    if (path.empty() && control.implicit) {
      path =
          control.launcher_report ? control.launcher_report->profile_path : FLAGS_paddle_prof_path;
    }
    control.children_dir = internal::ChildrenDir(path, control.process, control.enable_unix_ns);
  }
  return control.children_dir;
}

// On the signal watcher, each time the snapshot signal comes: the running window's
// snapshot at <profile path>.snapshot<N>, the profile path being the caller's, the
// implicit profile's or FLAGS_paddle_prof_path, else ./paddle_prof.<pid>.json.
void WriteSignalledSnapshot() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  internal::ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
  std::string base = WindowProfilePath(control, options);
  if (base.empty()) base = "paddle_prof." + std::to_string(getpid()) + ".json";
  options.profile_path = base + ".snapshot" + std::to_string(control.snapshots_written++);
  try {
    const Report report = SnapshotLocked(control, options);
    std::fprintf(stderr, "paddle_prof: snapshot written to %s\n", options.profile_path.c_str());
  } catch (const std::exception& e) {
    LOG(ERROR) << "paddle_prof: cannot write the snapshot: " << e.what();
  }
}

// FLAGS_paddle_prof_snapshot_signal, read as the library loads and as each window opens
// (a program that parses its command line sets it late).
void CatchSnapshotSignalFromFlags() {
  const std::string& name = FLAGS_paddle_prof_snapshot_signal;
  if (name.empty()) return;
  if (const int signal = internal::SignalNamed(name); signal != 0) {
    internal::CatchSnapshotSignal(signal, WriteSignalledSnapshot);
  } else {
    LOG_FIRST_N(ERROR, 1) << "paddle_prof: ignoring FLAGS_paddle_prof_snapshot_signal='" << name
                          << "': not a signal (USR1, SIGUSR2, 10, ...)";
  }
}

void BecomeChildLocked(Control& control, const internal::ParentWindow& parent);

// Opens a window: the program's, an implicit profile, or with `child_of`, the quiet
// profile of a child started as a fresh program (see BecomeChildLocked).
void EnableLocked(Control& control, ProfilerState state, bool implicit,
                  const internal::ParentWindow* child_of = nullptr) {
  // For this window only, whether it opens or not.
  const std::optional<Control::Distributed> distributed =
      std::exchange(control.next_distributed, std::nullopt);
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
  control.snapshot_path.clear();
  control.process = internal::ThisProcess();
  control.clock_offset_ns = 0;
  control.clock_warning.clear();
  if (distributed) {  // before the capture opens: its directory may name the rank
    control.process.rank = distributed->rank;
    control.process.world_size = distributed->world_size;
    control.process.backend = distributed->backend;
    control.clock_offset_ns = distributed->offset_ns;
    control.clock_warning = distributed->warning;
  }
  control.oom_path.clear();
  control.oom_dumped = false;
  control.failures_after_oom = 0;
  if (!implicit) control.launcher_report.reset();  // the program's window: its own options
  // A child's profile replaced by the child's own profiler: its parent gets nothing.
  if (!control.child_path.empty()) {
    internal::RemoveChildMarker(control.child_path, std::exchange(control.child_marker, -1));
  }
  control.child_path.clear();
  control.follow_children = FLAGS_paddle_prof_follow_children;
  control.children_dir.clear();
  control.launched_children.clear();
  control.keep_last_steps = std::max(FLAGS_paddle_prof_keep_last_steps, 0);
  control.capture_dir = FLAGS_paddle_prof_capture_dir;
  internal::RecordStacks(FLAGS_paddle_prof_record_stacks);
  if (child_of != nullptr) BecomeChildLocked(control, *child_of);
  OpenWindow(control);
  control.first_window = control.last_window;
  control.enable_unix_ns = control.start_unix_ns;
  CatchSnapshotSignalFromFlags();
}

std::string ClockWarning(const internal::Collection& c, uint64_t window_ns) {
  if (!Clock::UsesTsc() || window_ns < 100000000 || c.end_tick <= c.start_tick) return "";
  const double window_rate =
      static_cast<double>(window_ns) / static_cast<double>(c.end_tick - c.start_tick);
  const double drift = window_rate / c.ns_per_tick - 1;
  if (std::fabs(drift) < 1e-3) return "";
  return "the TSC and CLOCK_MONOTONIC drifted apart by " + internal::FormatFixed(drift * 100, 3) +
         "% during the window; times may be off by as much.";
}

// The open window's Collection up to `c->end_tick`, which the caller has set with the
// steps and the GPU capture.
// A flight recorder's report covers its kept steps: it starts where the step before
// them ended, and its places' figures are those of the kept steps.
void KeepToTheKeptSteps(const Control& control, internal::Collection* c) {
  c->keep_last_steps = control.keep_last_steps;
  c->steps_dropped = control.steps_dropped;
  if (!control.before_kept) return;
  const internal::StepMark& before = *control.before_kept;
  c->start_tick = before.tick;
  const std::vector<int64_t> running = internal::PlaceStepPeaks();
  for (size_t i = 0; i < c->places.size(); ++i) {
    PlaceSummary& p = c->places[i];
    if (const auto start = before.end_bytes.find(p.place); start != before.end_bytes.end()) {
      p.start_bytes = start->second;
    }
    p.peak_bytes = std::max({p.start_bytes, p.end_bytes, i < running.size() ? running[i] : 0});
    for (const internal::StepMark& step : c->steps) {
      if (const auto peak = step.peak_bytes.find(p.place); peak != step.peak_bytes.end()) {
        p.peak_bytes = std::max(p.peak_bytes, peak->second);
      }
    }
  }
}

// Where each recorder's oldest kept step begins, for those that recorded before it.
std::unordered_map<const internal::ThreadRecorder*, internal::KeptStart> KeptStarts(
    const Control& control) {
  std::unordered_map<const internal::ThreadRecorder*, internal::KeptStart> kept;
  for (const auto& [recorder, starts] : control.step_starts) {
    if (starts.size() == static_cast<size_t>(control.keep_last_steps) + 1) {
      kept[recorder] = starts.front();
    }
  }
  return kept;
}

void CollectLocked(const Control& control, uint64_t window, uint64_t end_ns,
                   internal::Collection* c) {
  c->state = control.state;
  c->start_tick = control.start_tick;
  c->ns_per_tick = Clock::NsPerTick();
  c->places = internal::PlaceWindowFigures();
  const internal::TrackerCounts now = internal::TrackerCountsNow();
  const internal::TrackerCounts& then = control.tracker_at_start;
  c->tracker = {now.untracked - then.untracked, now.oversized - then.oversized,
                now.live_again - then.live_again};
  if (std::string w = ClockWarning(*c, end_ns - control.start_ns); !w.empty()) {
    c->warnings.push_back(std::move(w));
  }
  if (!control.capture_warning.empty()) c->warnings.push_back(control.capture_warning);
  if (const int64_t failed =
          internal::EventBuffer::CaptureChunksFailed() - control.capture_failed_at_start;
      failed > 0) {
    c->warnings.push_back("capture_dir '" + control.capture_dir + "': " +
                          std::to_string(failed) +
                          " thread(s) could not add a record chunk there (a full disk?): their "
                          "later records are in this report but not in the capture.");
  }
  if (const int64_t missed =
          internal::MappingsNotFollowedByPreload() - control.mappings_not_followed_at_start;
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
  internal::CollectThreads(window, control.first_window, KeptStarts(control), c);
}

void WriteFilesOf(const internal::Collection& c, const internal::ReportOptions& options,
                  Report* report) {
  if (!options.profile_path.empty()) {
    internal::WriteProfileFiles(c, internal::ExpandPathFields(options.profile_path, c.process),
                                report);
  }
}

Report ReportOf(const internal::Collection& c, const internal::ReportOptions& options) {
  Report report = internal::BuildReport(c, options);
  WriteFilesOf(c, options, &report);
  return report;
}

uint64_t OpenWindowOrThrow() {
  const uint64_t window = g_window.load(std::memory_order_relaxed);
  if (window == 0) throw std::logic_error("paddle_prof: the profiler is not enabled");
  return window;
}

// The children of the window that have written their profiles, merged into `report`;
// those that have not are named in its warnings.
void MergeArrivedChildren(const std::string& children_dir, int64_t start_unix_ns,
                          const std::vector<int64_t>& launched, bool per_process, Report* report) {
  internal::ArrivedChildren arrived =
      internal::CollectArrivedChildren(children_dir, report->process.pid, start_unix_ns, launched);
  if (!arrived.reports.empty() || per_process) {
    internal::MergeChildren(report, arrived.reports, per_process);
  }
  for (std::string& warning : arrived.warnings) report->warnings.push_back(std::move(warning));
}

Report StopLocked(Control& control, const internal::ReportOptions& given) {
  const uint64_t window = OpenWindowOrThrow();
  internal::ReportOptions options = given;
  if (!control.child_path.empty()) options.profile_path = control.child_path;
  const std::string children_dir = control.follow_children ? ChildrenDirLocked(control) : "";
  const int64_t start_unix_ns = control.enable_unix_ns;
  internal::Collection c;
  c.end_tick = Clock::Now();
  const uint64_t end_ns = internal::MonotonicNs();
  g_window.store(0, std::memory_order_release);
  control.implicit = false;
  EndCapture(control, CaptureFiles::kRemove);  // the mapped records stay readable
  if (internal::GpuTracer* gpu = TakeGpuTracer(control)) {
    c.gpu_traced = true;
    c.gpu = gpu->Stop();
  }
  c.steps = std::move(control.steps);
  c.failures_after_oom = control.failures_after_oom;
  c.memory_events = std::move(control.spare_memory_events);
  CollectLocked(control, window, end_ns, &c);
  internal::RecordStacks(false);  // after the collection, which says whether it recorded them
  Report report = internal::BuildReport(c, options);
  if (!children_dir.empty()) {
    MergeArrivedChildren(children_dir, start_unix_ns, control.launched_children,
                         options.per_process, &report);
  }
  WriteFilesOf(c, options, &report);  // the summary with the children
  if (!control.child_path.empty()) {
    internal::RemoveChildMarker(control.child_path, std::exchange(control.child_marker, -1));
    control.child_path.clear();
  }
  // Kept for the next stop, up to a bound: a window's memory events come back as pages
  // already touched.
  constexpr size_t kSpareBytes = size_t{64} << 20;
  if (c.memory_events.capacity() * sizeof(internal::MemoryEvent) <= kSpareBytes) {
    control.spare_memory_events = std::move(c.memory_events);
  }
  return report;
}

// The records are read in place while their threads go on appending: each thread's
// buffer is read up to the size it had published by then, and no thread rewinds it
// while the profiler's lock keeps the window open.
Report SnapshotLocked(const Control& control, const internal::ReportOptions& options,
                      const OutOfMemory* oom) {
  const uint64_t window = OpenWindowOrThrow();
  internal::Collection c;
  c.end_tick = Clock::Now();
  const uint64_t end_ns = internal::MonotonicNs();
  c.snapshot = true;
  if (oom != nullptr) c.oom = *oom;
  c.steps = control.steps;
  if (control.gpu != nullptr) {
    c.gpu_traced = true;  // GPU columns, empty: CUPTI hands its records over at the stop
    c.warnings.push_back("GPU work is reported when the window stops, not in snapshots.");
  }
  CollectLocked(control, window, end_ns, &c);
  return ReportOf(c, options);
}

// At exit, or on a signal that ends the program: the implicit profile's table on
// stdout and its files, if it is still running.
void StopImplicitProfile() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (!control.implicit || g_window.load(std::memory_order_relaxed) == 0) return;
  const internal::ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
  const bool a_childs = !control.child_path.empty();  // which prints nothing
  try {
    const Report report = StopLocked(control, options);
    if (a_childs) return;
    std::fputs(report.Table(false, options.row_limit).c_str(), stdout);
    std::fflush(stdout);
  } catch (const std::exception& e) {  // the program is ending: say why there is no report
    LOG(ERROR) << "paddle_prof: cannot report the whole-program profile: " << e.what();
  }
}

// At exit, before the flags it reads are destroyed: a static's destructor is registered
// as it is made, after theirs, so it runs first under every runtime (with std::atexit,
// ThreadSanitizer's ran the flags' destructors first). Once per process, a forked child
// inheriting the parent's.
void StopImplicitProfileAtExit() {
  static const struct ReportAtExit {
    ~ReportAtExit() { StopImplicitProfile(); }
  } report_at_exit;
}

// Makes the window about to open (the caller opens it) the quiet profile of a child of
// `parent`: this process's, whose files go to <children dir>/<pid>.json when it stops
// (at exit, or as the Python package finishes it), never printed. It is implicit: a
// profiler the child opens replaces it. Caller holds control.mu.
void BecomeChildLocked(Control& control, const internal::ParentWindow& parent) {
  control.implicit = true;
  control.process = internal::ThisProcess();
  control.process.role = "child";
  control.process.parent_pid = parent.pid;
  control.child_path = internal::ChildProfilePath(parent.children_dir, control.process.pid);
  control.snapshot_path = control.child_path;  // the snapshot signal's, and its own children's
  control.oom_path = control.child_path + ".oom.json";
  control.oom_dumped = false;
  control.failures_after_oom = 0;
  control.children_dir.clear();
  control.capture_dir.clear();  // a capture is its parent's
  control.capture_warning.clear();
  std::string error;
  control.child_marker = internal::WriteChildMarker(parent, control.process.pid, &error);
  if (control.child_marker < 0) {
    // Straight to the file descriptor: in a forked child, a lock of glog's or of stderr's
    // may have been held by another thread of the parent, forever.
    const std::string line = "paddle_prof: child " + std::to_string(control.process.pid) +
                             ": its parent will not know of it: " + error + "\n";
    [[maybe_unused]] const ssize_t said = write(STDERR_FILENO, line.data(), line.size());
  }
  StopImplicitProfileAtExit();
}

// In a forked child, with every lock held (see LockAllForFork): the parent's signal
// watcher, GPU context and own profile (if it is a followed child) are not there. A window that
// follows children is followed (the caller makes it the child's once the locks are free); an
// implicit one that does not is dropped, silently, for its report and files are the parent's. An
// explicit one that does not stays as it was. Returns whether the child follows.
bool LeaveTheParentsWindowInChild() {
  Control& control = GetControl();
  internal::ReleaseCaughtSignalsInChild();
  // A parent that is itself a followed child keeps its marker and its lock.
  if (control.child_marker >= 0) close(std::exchange(control.child_marker, -1));
  control.child_path.clear();
  const bool follow = g_window.load(std::memory_order_relaxed) != 0 && control.follow_children;
  if (!follow && !control.implicit) return false;
  TakeGpuTracer(control);  // the parent's: a GPU context does not carry over fork()
  if (!follow) {
    control.implicit = false;
    g_window.store(0, std::memory_order_release);
  }
  return follow;
}

// fork() copies a lock another thread holds as held, forever, in the child: the fork
// waits until each of the library's locks is free and holds them across it, in the
// order they nest (the profiler's outermost). The parent settles where a child of the
// open window writes first, so that the child and the parent's stop agree.
void LockAllForFork() {
  internal::LockCaughtSignalsForFork();
  Control& control = GetControl();
  control.mu.lock();
  if (g_window.load(std::memory_order_relaxed) != 0 && control.follow_children) {
    internal::NativeGuard profiler_memory;
    ChildrenDirLocked(control);
  }
  internal::LockCaptureNamesForFork();
  internal::LockGpuTracerForFork();
  internal::RecorderRegistry::Get().LockForFork();
  internal::LockPlaceRegistryForFork();
  internal::LiveBlocks::LockForFork();
  internal::LockCallStacksForFork();
  internal::LockNativeStacksForFork();
}

void UnlockAllAfterFork() {
  internal::UnlockNativeStacksAfterFork();
  internal::UnlockCallStacksAfterFork();
  internal::LiveBlocks::UnlockAfterFork();
  internal::UnlockPlaceRegistryAfterFork();
  internal::RecorderRegistry::Get().UnlockAfterFork();
  internal::UnlockGpuTracerAfterFork();
  internal::UnlockCaptureNamesAfterFork();
  GetControl().mu.unlock();
  internal::UnlockCaughtSignalsAfterFork();
}

void AfterForkInChild() {
  Control& control = GetControl();
  const bool captured = control.capture != nullptr;
  if (captured) internal::g_capture.store(nullptr, std::memory_order_release);
  const bool follow = LeaveTheParentsWindowInChild();
  UnlockAllAfterFork();
  // The capture is the parent's: the child neither logs into it nor removes it. The child
  // has one thread: this runs with the locks free, taking them in no other order.
  if (captured) {
    internal::CloseCaptureNames();
    control.capture = nullptr;
    control.capture_dir.clear();
    internal::RecorderRegistry::Get().DetachCapturesInChild();
  }
  if (follow) {
    internal::NativeGuard profiler_memory;
    std::lock_guard<std::mutex> lock(control.mu);
    BecomeChildLocked(control, {control.process.pid, control.enable_unix_ns, control.children_dir});
    OpenWindow(control);  // the parent's records and steps are left out, as by a reset
    control.first_window = control.last_window;
    control.enable_unix_ns = control.start_unix_ns;
  }
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

namespace {

// A flight recorder's step mark: each recorder notes where the next step begins, and
// the records before the oldest step it keeps go back to be reused. Caller holds the
// profiler's lock.
void DropStepsPastTheLast(Control& control) {
  const uint64_t window = g_window.load(std::memory_order_relaxed);
  const auto keep = static_cast<size_t>(control.keep_last_steps);
  std::unique_lock<std::mutex> registry_lock;
  for (const internal::ThreadRecorder* r :
       internal::RecorderRegistry::Get().LockAll(&registry_lock)) {
    if (r->window() != window) continue;
    std::deque<internal::KeptStart>& starts = control.step_starts[r];
    starts.push_back({r->buffer().Size(), r->SerialNow()});
    if (starts.size() > keep + 1) starts.pop_front();
    if (starts.size() == keep + 1) r->buffer().ReleaseBelow(starts.front().record);
  }
  while (control.steps.size() > keep) {
    control.before_kept = std::move(control.steps.front());
    control.steps.erase(control.steps.begin());
    ++control.steps_dropped;
  }
  if (control.gpu != nullptr && control.before_kept) {
    control.gpu->DropEndedBefore(control.before_kept->tick);
  }
}

}  // namespace

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
  if (control.keep_last_steps > 0) DropStepsPastTheLast(control);
  if (control.capture != nullptr) {
    AppendCaptureStep(control, step);
    if (std::string error; !WriteCaptureMeta(control, &error)) {
      LOG_FIRST_N(WARNING, 1) << "paddle_prof: capture: " << error;
    }
  }
}

namespace internal {

Report StopProfiler(const ReportOptions& options) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return StopLocked(control, options);
}

std::optional<Report> WriteOutOfMemoryDump(const OutOfMemory& oom) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return std::nullopt;
  if (std::exchange(control.oom_dumped, true)) {
    ++control.failures_after_oom;
    return std::nullopt;
  }
  ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
  if (!control.oom_path.empty()) {
    options.profile_path = control.oom_path;
  } else if (!FLAGS_paddle_prof_oom_path.empty()) {
    options.profile_path = FLAGS_paddle_prof_oom_path;
  } else if (std::string base = WindowProfilePath(control, options); !base.empty()) {
    options.profile_path = base + ".oom.json";
  } else {
    options.profile_path = "paddle_prof.oom." + std::to_string(getpid()) + ".json";
  }
  return SnapshotLocked(control, options, &oom);
}

void SetKeepLastSteps(int steps) {
  if (steps < 0) throw std::invalid_argument("keep_last_steps must be >= 0");
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  // The steps already marked were kept, or released, under the bound they had.
  if (!control.steps.empty() || control.steps_dropped > 0) {
    throw std::logic_error("keep_last_steps is set before the window's first step mark");
  }
  control.keep_last_steps = steps;
  if (steps > 0 && control.capture != nullptr) {
    EndCapture(control, CaptureFiles::kRemove);
    control.capture_warning = "capture_dir '" + control.capture_dir +
                              "': a flight recorder (keep_last_steps) reuses its memory and "
                              "cannot be captured; the window was recorded in memory only.";
    LOG(WARNING) << "paddle_prof: " << control.capture_warning;
  }
}

void SetOutOfMemoryPath(const std::string& path) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) control.oom_path = path;
}

std::string SetCaptureDir(const std::string& dir, bool every_window) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (every_window) FLAGS_paddle_prof_capture_dir = dir;
  if (g_window.load(std::memory_order_relaxed) == 0) return "";
  control.capture_dir = dir;
  if (control.gpu != nullptr) control.gpu->Discard();
  OpenWindow(control);
  return control.capture_warning;
}

void SetDistributedInfo(int rank, int world_size, const std::string& backend,
                        std::optional<int64_t> offset_ns, const std::string& warning) {
  if (rank < 0 || world_size <= rank) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " of a world of " +
                                std::to_string(world_size));
  }
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  control.next_distributed =
      Control::Distributed{rank, world_size, backend, offset_ns.value_or(0), warning};
}

void SetSnapshotPath(const std::string& profile_path) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) control.snapshot_path = profile_path;
}

void CatchSnapshotSignalNamed(const std::string& name) {
  const int signal = SignalNamed(name);
  if (signal == 0) {
    throw std::invalid_argument("not a signal: '" + name + "' (USR1, SIGUSR2, 10, ...)");
  }
  CatchSnapshotSignal(signal, WriteSignalledSnapshot);
}

Report SnapshotProfiler(const ReportOptions& options) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return SnapshotLocked(control, options);
}

bool EnableImplicitProfiler(ProfilerState state, const ReportOptions& report) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) return false;
  EnableLocked(control, state, /*implicit=*/true);
  control.launcher_report = report;
  internal::CatchTerminationSignals({SIGTERM, SIGHUP}, StopImplicitProfile);
  return true;
}

bool ImplicitProfilerRunning() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return control.implicit && g_window.load(std::memory_order_relaxed) != 0;
}

void NoteChildLaunched(int64_t pid) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0 && control.follow_children) {
    control.launched_children.push_back(pid);
  }
}

void SetFollowChildren(bool follow) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) control.follow_children = follow;
}

std::optional<FollowedWindow> FollowedWindowNow() {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0 || !control.follow_children) {
    return std::nullopt;
  }
  return FollowedWindow{control.state,
                        {control.process.pid, control.enable_unix_ns, ChildrenDirLocked(control)}};
}

bool StartChildProfile(ProfilerState state, const ParentWindow& parent) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  {
    std::lock_guard<std::mutex> lock(control.mu);
    if (g_window.load(std::memory_order_relaxed) != 0 && !control.implicit) return false;
    EnableLocked(control, state, /*implicit=*/true, &parent);
  }
  // The child's signals end it as its parent's do, once its profile is written. Outside
  // the profiler's lock, which fork() takes after the signals' install lock.
  internal::CatchTerminationSignals({SIGTERM, SIGHUP}, StopImplicitProfile);
  return true;
}

bool ChildProfileRunning() {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  return !control.child_path.empty() && g_window.load(std::memory_order_relaxed) != 0;
}

void SetChildRole(const std::string& role, std::optional<int> worker_id) {
  Control& control = GetControl();
  internal::NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (control.child_path.empty()) return;
  control.process.role = role;
  control.process.worker_id = worker_id;
}

void FinishChildProfile() {
  if (ChildProfileRunning()) StopImplicitProfile();
}

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

// Starts a whole-program profile from FLAGS_paddle_prof_state and prints its report
// at exit, or when SIGTERM, SIGINT or SIGHUP ends the program. It is implicit: a
// profiler the program enables itself replaces it silently, and a forked child follows
// it with a profile of its own (or, with follow_children off, drops it: the report and
// the files are the parent's).
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
  internal::CatchTerminationSignals({SIGTERM, SIGINT, SIGHUP}, StopImplicitProfile);
  StopImplicitProfileAtExit();
}

// FLAGS_paddle_prof_state in the environment profiles the whole program, from the
// moment the library loads.
const bool g_implicit_profile = [] {
  WhenFlagsRead([] {
    CatchSnapshotSignalFromFlags();
    if (!FLAGS_paddle_prof_state.empty()) StartImplicitProfiler();
  });
  return true;
}();

}  // namespace

}  // namespace internal

}  // namespace paddle_prof
