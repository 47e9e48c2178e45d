// The whole-program profile (FLAGS_paddle_prof_state, or a launcher's: python3 -m
// paddle_prof run), reported at exit or when a signal ends the program, and the snapshot
// signal, which writes the running window's report without stopping it.
#include <glog/logging.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "caught_signals.h"
#include "flags.h"
#include "native_guard.h"
#include "profiler_control.h"
#include "window_control.h"
#include "window_state.h"

namespace paddle_prof::internal {
namespace {

// On the signal watcher, each time the snapshot signal comes: the running window's
// snapshot at <profile path>.snapshot<N>, the profile path being the caller's, the
// implicit profile's or FLAGS_paddle_prof_path, else ./paddle_prof.<pid>.json.
void WriteSignalledSnapshot() {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) == 0) return;
  ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
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

}  // namespace

// FLAGS_paddle_prof_snapshot_signal, read as the library loads and as each window opens
// (a program that parses its command line sets it late).
void CatchSnapshotSignalFromFlags() {
  const std::string& name = FLAGS_paddle_prof_snapshot_signal;
  if (name.empty()) return;
  if (const int signal = SignalNamed(name); signal != 0) {
    CatchSnapshotSignal(signal, WriteSignalledSnapshot);
  } else {
    LOG_FIRST_N(ERROR, 1) << "paddle_prof: ignoring FLAGS_paddle_prof_snapshot_signal='" << name
                          << "': not a signal (USR1, SIGUSR2, 10, ...)";
  }
}

void StopImplicitProfile() {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (!control.implicit || g_window.load(std::memory_order_relaxed) == 0) return;
  const ReportOptions options = control.launcher_report.value_or(ReportFromFlags());
  const bool a_childs = !control.children.own_path.empty();  // which prints nothing
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

bool EnableImplicitProfiler(ProfilerState state, const ReportOptions& report) {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  if (g_window.load(std::memory_order_relaxed) != 0) return false;
  EnableLocked(control, state, /*implicit=*/true);
  control.launcher_report = report;
  CatchTerminationSignals({SIGTERM, SIGHUP}, StopImplicitProfile);
  return true;
}

bool ImplicitProfilerRunning() {
  Control& control = GetControl();
  NativeGuard profiler_memory;
  std::lock_guard<std::mutex> lock(control.mu);
  return control.implicit && g_window.load(std::memory_order_relaxed) != 0;
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
    NativeGuard profiler_memory;
    std::lock_guard<std::mutex> lock(control.mu);
    EnableLocked(control, state, /*implicit=*/true);
    control.launcher_report.reset();
  } catch (const std::exception& e) {
    LOG(ERROR) << "paddle_prof: not profiling this program (FLAGS_paddle_prof_state='"
               << FLAGS_paddle_prof_state << "'): " << e.what();
    return;
  }
  CatchTerminationSignals({SIGTERM, SIGINT, SIGHUP}, StopImplicitProfile);
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

}  // namespace paddle_prof::internal
