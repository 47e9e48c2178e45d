// The window control's shared state, private to the control layer: the Control every
// entry point works on under its lock, and the steps of a window's life that the files
// of this layer share (profiler.cc opens and closes windows; capture_control.cc,
// child_control.cc and implicit_profile.cc do captures, followed children, and the
// whole-program profile with its signals).
#ifndef PADDLE_PROF_SRC_WINDOW_CONTROL_H_
#define PADDLE_PROF_SRC_WINDOW_CONTROL_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture_files.h"
#include "child_profiles.h"
#include "collection.h"
#include "collector.h"
#include "gpu_tracer.h"
#include "memory_tracker.h"
#include "own_arena.h"
#include "paddle_prof/profiler.h"
#include "paddle_prof/report.h"
#include "place_registry.h"
#include "process_identity.h"
#include "process_memory.h"
#include "report_options.h"
#include "thread_recorder.h"
#include "window_state.h"

namespace paddle_prof::internal {

// A step mark as the window keeps it: no heap allocation per step (own_arena.h says
// why). It becomes the Collection's StepMark as the window is read.
struct StepRecord {
  uint64_t tick = 0;
  PlaceStepFigures places;
  ProcessFigures process;
  std::optional<int64_t> samples;
  StepMark Mark() const;
};

struct Control {
  std::mutex mu;  // serialises enable, reset, disable and step marks
  std::vector<MemoryEvent> spare_memory_events;  // the last stop's, for the next
  uint64_t last_window = 0;
  uint64_t first_window = 0;  // of this EnableProfiler(): resets open later ones
  bool implicit = false;      // started from FLAGS_paddle_prof_state or by a launcher
  std::optional<ReportOptions> launcher_report;  // else the flags say
  ProfilerState state = ProfilerState::kDisabled;
  GpuTracer* gpu = nullptr;  // tracing the GPU in this window
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
  OwnArena step_arena;  // the steps' storage
  std::vector<StepRecord, ArenaAllocator<StepRecord>> steps{
      ArenaAllocator<StepRecord>(&step_arena)};
  TrackerCounts tracker_at_start;
  int64_t capture_failed_at_start = 0;  // EventBuffer::CaptureChunksFailed()
  int64_t mappings_not_followed_at_start = 0;  // MappingsNotFollowedByPreload()
  // A flight recorder (keep_last_steps): only the last steps' records are kept.
  int keep_last_steps = 0;  // 0: every step
  int64_t steps_dropped = 0;
  std::optional<StepRecord> before_kept;  // closed the step before the oldest kept
  // Per recorder, where each of the last keep_last_steps + 1 steps began.
  std::unordered_map<const ThreadRecorder*, std::deque<KeptStart>> step_starts;
  std::string snapshot_path;  // where the snapshot signal writes, when the caller said
  // Out of memory (oom_dump.cc): one dump per EnableProfiler(), resets included.
  std::string oom_path;  // the caller's, else the default
  bool oom_dumped = false;
  int64_t failures_after_oom = 0;
  int snapshots_written = 0;  // by the snapshot signal, in this process
  // capture_dir: where each window of this profiler captures (empty: nowhere), the
  // capture of the open window (null: none), and why it has none when it was asked for.
  std::string capture_dir;
  const CaptureTarget* capture = nullptr;
  std::string capture_warning;
  // Every capture so far, kept: a recorder may still read one that ended (40 bytes each).
  std::deque<CaptureTarget> captures;
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

// The one Control (leaked: the exit handler may still use it).
Control& GetControl();

// ---- profiler.cc: a window's life. "Locked": the caller holds control.mu. ----

// Opens a window: the program's, an implicit profile, or with `child_of`, the quiet
// profile of a child started as a fresh program (see BecomeChildLocked).
void EnableLocked(Control& control, ProfilerState state, bool implicit,
                  const ParentWindow* child_of = nullptr);
// Opens the next window in place of the open one (a reset, a new capture, a followed
// child's first window).
void OpenWindow(Control& control);
Report StopLocked(Control& control, const ReportOptions& given);
Report SnapshotLocked(const Control& control, const ReportOptions& options,
                      const OutOfMemory* oom = nullptr);
// Hands the GPU window's tracer back: scopes stop pushing ids to it.
GpuTracer* TakeGpuTracer(Control& control);
// The report options of FLAGS_paddle_prof_*, read when the profile ends: a program that
// parses its command line sets them late.
ReportOptions ReportFromFlags();
// The open window's profile path as its caller said: the Python profiler's, else the
// implicit profile's or FLAGS_paddle_prof_path (in `options`); "" when none did.
std::string WindowProfilePath(const Control& control, const ReportOptions& options);

// ---- capture_control.cc: the window's capture (capture_files.h). ----

enum class CaptureFiles { kKeep, kKeepChunks, kRemove };
// `dir` made absolute (the program may change its working directory mid-window); as
// given when it does not exist.
std::string AbsoluteDir(const std::string& dir);
// Starts the capture of window `window` (about to open) in control.capture_dir; on
// failure, says why in control.capture_warning (and on stderr) and the window is
// recorded in memory only.
void StartCapture(Control& control, uint64_t window, bool fresh);
// Ends the open window's capture, its files kept or removed as `files` says.
void EndCapture(Control& control, CaptureFiles files);
// A step mark, into the capture: appended to its steps, and its meta rewritten.
void CaptureStep(const Control& control, const StepMark& step);

// ---- child_control.cc: the children a window follows, and fork. ----

// The open window's children directory, beside the profile path known by now.
const std::string& ChildrenDirLocked(Control& control);
// Makes the window about to open the quiet profile of a child of `parent`.
void BecomeChildLocked(Control& control, const ParentWindow& parent);
// The children of the window that have written their profiles, merged into `report`;
// those that have not are named in its warnings.
void MergeArrivedChildren(const std::string& children_dir, int64_t start_unix_ns,
                          const std::vector<int64_t>& launched, bool per_process,
                          Report* report);

// ---- implicit_profile.cc: the whole-program profile and the snapshot signal. ----

// At exit, or on a signal that ends the program: the implicit profile's table on
// stdout and its files, if it is still running.
void StopImplicitProfile();
// Registers StopImplicitProfile() to run at exit, once per process.
void StopImplicitProfileAtExit();
// FLAGS_paddle_prof_snapshot_signal, read as the library loads and as each window opens.
void CatchSnapshotSignalFromFlags();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_WINDOW_CONTROL_H_
