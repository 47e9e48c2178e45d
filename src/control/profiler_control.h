// The profiler's entry points that are not public API.
#ifndef PADDLE_PROF_SRC_PROFILER_CONTROL_H_
#define PADDLE_PROF_SRC_PROFILER_CONTROL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "child_profiles.h"
#include "paddle_prof/report.h"
#include "report_options.h"

namespace paddle_prof::internal {

// StopProfiler() with every report option given (the public one takes per-thread rows
// from FLAGS_paddle_prof_per_thread).
Report StopProfiler(const ReportOptions& options);
// SnapshotProfiler() likewise.
Report SnapshotProfiler(const ReportOptions& options);

// MarkStep(), with the step's number of samples when it was given.
void MarkStepOf(std::optional<int64_t> samples);

// The open window's out-of-memory dump for `oom`, at the caller's oom path (else
// FLAGS_paddle_prof_oom_path, else <profile path>.oom.json, else
// ./paddle_prof.oom.<pid>.json): the first failure since EnableProfiler() only; nothing
// (the failure counted) for later ones, nothing when no window is open.
std::optional<Report> WriteOutOfMemoryDump(const OutOfMemory& oom);
// The open window's oom path (the Python profiler's oom_path); "" for the default.
void SetOutOfMemoryPath(const std::string& path);

// Makes the open window a flight recorder from its next step mark: only the last
// `steps` steps' records are kept (0: every step). FLAGS_paddle_prof_keep_last_steps is
// the default of each window. std::invalid_argument below 0.
void SetKeepLastSteps(int steps);

// Gives the open window a capture in `dir` (capture_dir; "" for none), restarting its
// records as a reset does: the Python profiler's capture_dir, set right after it enables.
// Returns why the window cannot capture there ("" when it does); it then records in
// memory only. FLAGS_paddle_prof_capture_dir is the default of each window; with
// `every_window` (python3 -m paddle_prof run --capture), it is set to `dir` too, so
// that a profiler the program opens later captures there as well.
std::string SetCaptureDir(const std::string& dir, bool every_window = false);

// The next window's place in a torch.distributed job, as the Python profiler finds it
// just before it enables: its rank, world size and backend (replacing RANK and
// WORLD_SIZE, in paths too), and the measured offset of this process's clock to rank 0's
// (none: not measured; `warning`, for the report, says why). The next EnableProfiler()
// takes it, whether it opens a window or fails.
void SetDistributedInfo(int rank, int world_size, const std::string& backend,
                        std::optional<int64_t> offset_ns, const std::string& warning);

// Where the snapshot signal writes during the open window (the Python profiler's
// profile_path); ignored while no window is open.
void SetSnapshotPath(const std::string& profile_path);
// Catches the snapshot signal `name` ("USR1", "SIGUSR1", 10): python3 -m paddle_prof run
// --snapshot-signal. std::invalid_argument when it names no signal.
void CatchSnapshotSignalNamed(const std::string& name);

// An implicit profile started by a launcher (python -m paddle_prof run), which reports
// it when the program ends, except on SIGTERM and SIGHUP: those print `report` and
// write its files here (SIGINT is left to the launcher). False, and nothing changed,
// when a profiler is already running.
bool EnableImplicitProfiler(ProfilerState state, const ReportOptions& report);
// Whether an implicit profile is still running (no explicit profiler replaced it).
bool ImplicitProfilerRunning();

// Whether the open window's report splits each place's memory into categories
// (memory_categories.h): paddle_prof.torch's windows, which mark the blocks they know
// (MarkBlock); turning it on forgets what earlier windows told of the live blocks.
// Ignored while no window is open; off as each window is enabled, kept by a reset.
// `plain_op_names`: the framework names its ops plainly (PaddlePaddle's "matmul"), so an
// op a temporary lives within is any event named by lower-case letters, digits and
// underscores (IsOpName); else ATen's and autograd's.
void SetMemoryCategories(bool on, bool plain_op_names = false);

// Whether processes started in the open window profile themselves and are merged into
// its report when it stops (FLAGS_paddle_prof_follow_children is the default of each
// window); ignored while no window is open.
void SetFollowChildren(bool follow);
// A child the open window's program started as a fresh program (multiprocessing's spawn
// or forkserver): it tells of itself only once it runs, so the stop names it even if it
// has not yet. Ignored while no window follows children.
void NoteChildLaunched(int64_t pid);

// The open window, for a child that starts as a fresh program (multiprocessing's spawn
// and forkserver): its state and where its children write. None when no window is open
// or it does not follow children.
struct FollowedWindow {
  ProfilerState state = ProfilerState::kCPU;
  ParentWindow window;
};
std::optional<FollowedWindow> FollowedWindowNow();
// In such a child, before its target runs: the quiet profile of a child of `parent`, as a
// forked child has (see FollowedWindow). False, and nothing changed, when a profiler the
// child opened itself runs. Throws as EnableProfiler() does for a state it cannot profile.
bool StartChildProfile(ProfilerState state, const ParentWindow& parent);
// Whether this process is profiling itself as a followed child (not replaced since).
bool ChildProfileRunning();
// The role the child's profile names (a DataLoader worker's: "worker" and its id), set
// before it is finished; ignored when no child profile runs.
void SetChildRole(const std::string& role, std::optional<int> worker_id);
// Stops the child's profile and writes its files, for exits that skip the exit handlers
// (os._exit). Does nothing when no child profile runs; never throws.
void FinishChildProfile();
// In a followed child: SIGTERM and SIGHUP finish its profile before they end it, as they
// do an implicit profile's (multiprocessing's Pool.terminate() ends its workers so).
void FinishChildProfileOnTermination();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROFILER_CONTROL_H_
