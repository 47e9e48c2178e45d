// The window control's shared state, private to the control layer: the Control every
// entry point works on under its lock, made of the window's own figures and one part
// each for the flight recorder, the capture, the followed children and the
// out-of-memory dump (each declared with its steps in a header of its own), and the
// steps of a window's life that the files of this layer share (profiler.cc opens and
// closes windows; implicit_profile.cc runs the whole-program profile with its signals).
#ifndef PADDLE_PROF_SRC_WINDOW_CONTROL_H_
#define PADDLE_PROF_SRC_WINDOW_CONTROL_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture_control.h"
#include "child_control.h"
#include "collection.h"
#include "collector.h"
#include "flight_recorder.h"
#include "gpu_tracer.h"
#include "memory_tracker.h"
#include "oom_dump.h"
#include "own_arena.h"
#include "paddle_prof/profiler.h"
#include "paddle_prof/report.h"
#include "place_registry.h"
#include "process_identity.h"
#include "process_memory.h"
#include "report_options.h"
#include "step_record.h"
#include "thread_recorder.h"
#include "window_state.h"

namespace paddle_prof::internal {

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
  FlightRecorder flight;  // keep_last_steps: only the last steps' records are kept
  std::string snapshot_path;  // where the snapshot signal writes, when the caller said
  OomDump oom;
  int snapshots_written = 0;  // by the snapshot signal, in this process
  WindowCapture capture;
  FollowedChildren children;
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
