// The children a window follows (child_profiles.h): where they write, the quiet profile
// a child keeps of itself, what the parent merges as it stops, and fork(): the
// library's locks held across it, and the child's window made its own.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "call_stacks.h"
#include "capture_files.h"
#include "caught_signals.h"
#include "child_profiles.h"
#include "flags.h"
#include "gpu_tracer.h"
#include "live_block_table.h"
#include "name_interner.h"
#include "native_guard.h"
#include "native_stacks.h"
#include "place_registry.h"
#include "profiler_control.h"
#include "recorder_registry.h"
#include "report_merge.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof::internal {

// The open window's children directory, beside the profile path known by now: the
// Python profiler's, or the implicit profile's (an explicit C++ window names its path
// only as it stops).
const std::string& ChildrenDirLocked(Control& control) {
  if (control.children.dir.empty()) {
    std::string path = control.snapshot_path;
    if (path.empty() && control.implicit) {
      path =
          control.launcher_report ? control.launcher_report->profile_path : FLAGS_paddle_prof_path;
    }
    control.children.dir = ChildrenDir(path, control.process, control.enable_unix_ns);
  }
  return control.children.dir;
}

// Makes the window about to open (the caller opens it) the quiet profile of a child of
// `parent`: this process's, whose files go to <children dir>/<pid>.json when it stops
// (at exit, or as the Python package finishes it), never printed. It is implicit: a
// profiler the child opens replaces it. Caller holds control.mu.
void BecomeChildLocked(Control& control, const ParentWindow& parent) {
  control.implicit = true;
  control.process = ThisProcess();
  control.process.role = "child";
  control.process.parent_pid = parent.pid;
  control.children.own_path = ChildProfilePath(parent.children_dir, control.process.pid);
  control.snapshot_path = control.children.own_path;  // the snapshot signal's, and its own children's
  control.oom.path = control.children.own_path + ".oom.json";
  control.oom.dumped = false;
  control.oom.failures_after = 0;
  control.children.dir.clear();
  control.capture.dir.clear();  // a capture is its parent's
  control.capture.warning.clear();
  std::string error;
  control.children.marker = WriteChildMarker(parent, control.process.pid, &error);
  if (control.children.marker < 0) {
    // Straight to the file descriptor: in a forked child, a lock of glog's or of stderr's
    // may have been held by another thread of the parent, forever.
    const std::string line = "paddle_prof: child " + std::to_string(control.process.pid) +
                             ": its parent will not know of it: " + error + "\n";
    [[maybe_unused]] const ssize_t said = write(STDERR_FILENO, line.data(), line.size());
  }
  StopImplicitProfileAtExit();
}

void MergeArrivedChildren(const std::string& children_dir, int64_t start_unix_ns,
                          const std::vector<int64_t>& launched, bool per_process, Report* report) {
  ArrivedChildren arrived =
      CollectArrivedChildren(children_dir, report->process.pid, start_unix_ns, launched);
  if (!arrived.reports.empty() || per_process) {
    MergeChildren(report, arrived.reports, per_process);
  }
  for (std::string& warning : arrived.warnings) report->warnings.push_back(std::move(warning));
}

namespace {

// In a forked child, with every lock held (see LockAllForFork): the parent's signal
// watcher, GPU context and own profile (if it is a followed child) are not there. A window that
// follows children is followed (the caller makes it the child's once the locks are free); an
// implicit one that does not is dropped, silently, for its report and files are the parent's. An
// explicit one that does not stays as it was. Returns whether the child follows.
bool LeaveTheParentsWindowInChild() {
  Control& control = GetControl();
  ReleaseCaughtSignalsInChild();
  // A parent that is itself a followed child keeps its marker and its lock.
  if (control.children.marker >= 0) close(std::exchange(control.children.marker, -1));
  control.children.own_path.clear();
  const bool follow = g_window.load(std::memory_order_relaxed) != 0 && control.children.follow;
  if (!follow && !control.implicit) return false;
  TakeGpuTracer(control);  // the parent's: a GPU context does not carry over fork()
  if (!follow) {
    control.implicit = false;
    g_window.store(0, std::memory_order_release);
  }
  return follow;
}

// A fork of a window that follows children: the child writes a byte here once its
// marker is written, and the parent waits for it (or for the pipe to close: the child
// died first, or fork failed), so that a window stopped right after the fork knows the
// child. Set while control.mu is held across the fork.
int g_marker_pipe[2] = {-1, -1};
// Past this, a parent goes on without knowing its child: never hung by one.
constexpr int kMarkerWaitMs = 5000;

void CloseMarkerPipeEnd(int end) {
  if (g_marker_pipe[end] >= 0) close(std::exchange(g_marker_pipe[end], -1));
}

// fork() copies a lock another thread holds as held, forever, in the child: the fork
// waits until each of the library's locks is free and holds them across it, in the
// order they nest (the profiler's outermost). The parent settles where a child of the
// open window writes first, so that the child and the parent's stop agree.
void LockAllForFork() {
  LockCaughtSignalsForFork();
  Control& control = GetControl();
  control.mu.lock();
  if (g_window.load(std::memory_order_relaxed) != 0 && control.children.follow) {
    NativeGuard profiler_memory;
    ChildrenDirLocked(control);
    if (pipe2(g_marker_pipe, O_CLOEXEC) != 0) g_marker_pipe[0] = g_marker_pipe[1] = -1;
  }
  LockCaptureNamesForFork();
  LockGpuTracerForFork();
  RecorderRegistry::Get().LockForFork();
  LockPlaceRegistryForFork();
  LiveBlocks::LockForFork();
  LockCallStacksForFork();
  LockNativeStacksForFork();
}

void UnlockAllAfterFork() {
  UnlockNativeStacksAfterFork();
  UnlockCallStacksAfterFork();
  LiveBlocks::UnlockAfterFork();
  UnlockPlaceRegistryAfterFork();
  RecorderRegistry::Get().UnlockAfterFork();
  UnlockGpuTracerAfterFork();
  UnlockCaptureNamesAfterFork();
  GetControl().mu.unlock();
  UnlockCaughtSignalsAfterFork();
}

// The parent's side of fork(): the locks freed, then the child's marker waited for.
void AfterForkInParent() {
  CloseMarkerPipeEnd(1);  // while control.mu is held: another fork's pipe is not made yet
  const int told = std::exchange(g_marker_pipe[0], -1);
  UnlockAllAfterFork();
  if (told < 0) return;
  pollfd wait{told, POLLIN, 0};
  while (poll(&wait, 1, kMarkerWaitMs) < 0 && errno == EINTR) {
  }
  close(told);
}

void AfterForkInChild() {
  CloseMarkerPipeEnd(0);
  Control& control = GetControl();
  const bool captured = control.capture.open != nullptr;
  if (captured) g_capture.store(nullptr, std::memory_order_release);
  const bool follow = LeaveTheParentsWindowInChild();
  UnlockAllAfterFork();
  // The capture is the parent's: the child neither logs into it nor removes it. The child
  // has one thread: this runs with the locks free, taking them in no other order.
  if (captured) {
    CloseCaptureNames();
    control.capture.open = nullptr;
    control.capture.dir.clear();
    RecorderRegistry::Get().DetachCapturesInChild();
  }
  if (follow) {
    NativeGuard profiler_memory;
    std::lock_guard<std::mutex> lock(control.mu);
    BecomeChildLocked(control, {control.process.pid, control.enable_unix_ns, control.children.dir});
    OpenWindow(control);  // the parent's records and steps are left out, as by a reset
    control.first_window = control.last_window;
    control.enable_unix_ns = control.start_unix_ns;
  }
  if (g_marker_pipe[1] >= 0) {
    [[maybe_unused]] const ssize_t told = write(g_marker_pipe[1], "m", 1);
    CloseMarkerPipeEnd(1);
  }
}

const bool g_fork_hook = [] {
  pthread_atfork(LockAllForFork, AfterForkInParent, AfterForkInChild);
  return true;
}();

}  // namespace

void NoteChildLaunched(int64_t pid) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0 && control.children.follow) {
    control.children.launched.push_back(pid);
  }
}

void SetFollowChildren(bool follow) {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) control.children.follow = follow;
}

std::optional<FollowedWindow> FollowedWindowNow() {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0 || !control.children.follow) {
    return std::nullopt;
  }
  return FollowedWindow{control.state,
                        {control.process.pid, control.enable_unix_ns, ChildrenDirLocked(control)}};
}

bool StartChildProfile(ProfilerState state, const ParentWindow& parent) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  {
    std::lock_guard<std::mutex> lock(control.mu);
    if (g_window.load(std::memory_order_relaxed) != 0 && !control.implicit) return false;
    EnableLocked(control, state, /*implicit=*/true, &parent);
  }
  // The child's signals end it as its parent's do, once its profile is written. Outside
  // the profiler's lock, which fork() takes after the signals' install lock.
  CatchTerminationSignals({SIGTERM, SIGHUP}, StopImplicitProfile);
  return true;
}

bool ChildProfileRunning() {
  Control& control = GetControl();
  std::lock_guard<std::mutex> lock(control.mu);
  return !control.children.own_path.empty() && g_window.load(std::memory_order_relaxed) != 0;
}

void SetChildRole(const std::string& role, std::optional<int> worker_id) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (control.children.own_path.empty()) return;
  control.process.role = role;
  control.process.worker_id = worker_id;
}

void FinishChildProfile() {
  if (ChildProfileRunning()) StopImplicitProfile();
}

void FinishChildProfileOnTermination() {
  if (ChildProfileRunning()) CatchTerminationSignals({SIGTERM, SIGHUP}, FinishChildProfile);
}

}  // namespace paddle_prof::internal
