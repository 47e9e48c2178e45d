#include "flags.h"

#include <glog/logging.h>

#include <cstdlib>
#include <string>

#include "paddle_prof/report.h"

DEFINE_string(paddle_prof_state, "",
              "Profile the whole program from library load to exit: CPU, GPU or All.");
DEFINE_string(paddle_prof_sorted_key, "total",
              "Sort key of the report printed at exit: calls, total, self, min, max, ave, "
              "peak_memory or live_memory.");
DEFINE_string(paddle_prof_path, "",
              "Where the whole-program profile writes its Chrome trace (and <path>.summary.json).");
DEFINE_bool(paddle_prof_per_thread, false, "Report one row per thread and event.");
DEFINE_bool(paddle_prof_per_process, false,
            "Report one row per process and event when children's profiles are merged.");
DEFINE_bool(paddle_prof_follow_children, true,
            "A process forked inside a window profiles itself quietly and writes its profile "
            "where the window collects it when it stops.");
DEFINE_int32(paddle_prof_row_limit, paddle_prof::Report::kDefaultRowLimit,
             "Rows of the table DisableProfiler() and the whole-program profile print "
             "(0: all); the summary file and the Report keep every row.");
DEFINE_int32(paddle_prof_max_buffer_mb, 1024,
             "Memory bound for recorded events, all threads together; calls past it are "
             "dropped and counted.");
DEFINE_string(paddle_prof_snapshot_signal, "",
              "A signal (USR1, SIGUSR2, 10, ...) that writes a snapshot of the running window "
              "to <profile path>.snapshot<N> each time it comes; the program goes on.");
DEFINE_string(paddle_prof_oom_path, "",
              "Where an allocation that fails while profiling writes the window's dump (its "
              "trace, and the summary at <path>.summary.json); default <profile path>.oom.json, "
              "else ./paddle_prof.oom.<pid>.json.");
DEFINE_int32(paddle_prof_keep_last_steps, 0,
             "A flight recorder: keep only the last N steps' calls, so that a window can stay "
             "open for days in bounded memory (0: keep everything).");
DEFINE_string(paddle_prof_capture_dir, "",
              "A directory where each window's records go to memory-mapped files as they are "
              "made, so that a process killed by SIGKILL or the OOM killer loses nothing it "
              "recorded (python3 -m paddle_prof recover DIR); a window that stops normally "
              "leaves none behind.");
DEFINE_bool(paddle_prof_record_stacks, false,
            "Keep the Python stack of each top-level call (no event open on its thread): "
            "rows name their sources, at_peak entries and growth holders the line that "
            "allocated, trace events carry args.stack.");
DEFINE_bool(paddle_prof_memory_timeline, true,
            "Record every tracked allocation and free with its time: what the report's "
            "at_peak and the trace's memory counters are built from. Off, tracking costs "
            "less and those two are left out.");
DEFINE_int32(paddle_prof_trace_counter_points, 100000,
             "Most points of a place's memory counter track in the trace, per window, the "
             "first (the window's start bytes) and the last included. Past it, the window "
             "is cut into (N - 2) / 2 equal time buckets, each keeping its lowest and its "
             "highest live bytes, so the peak stays exact. 0 or less: every allocation "
             "and free is a point; 1 to 3 count as 4.");

namespace paddle_prof::internal {

namespace {

// gflags reads only the command line, which a library does not own: each flag is
// also taken from the environment variable FLAGS_<name>, through gflags' own parser.
void ReadFlagsFromEnvironment() {
  for (const char* name :
       {"paddle_prof_state", "paddle_prof_sorted_key", "paddle_prof_path", "paddle_prof_per_thread",
        "paddle_prof_max_buffer_mb", "paddle_prof_memory_timeline", "paddle_prof_snapshot_signal",
        "paddle_prof_row_limit", "paddle_prof_oom_path", "paddle_prof_trace_counter_points",
        "paddle_prof_keep_last_steps", "paddle_prof_capture_dir", "paddle_prof_per_process",
        "paddle_prof_follow_children", "paddle_prof_record_stacks"}) {
    const char* value = std::getenv(("FLAGS_" + std::string(name)).c_str());
    if (value == nullptr) continue;
    if (gflags::SetCommandLineOption(name, value).empty()) {
      LOG(ERROR) << "paddle_prof: ignoring FLAGS_" << name << "='" << value
                 << "': not a valid value";
    }
  }
}

bool g_flags_read = false;               // constant-initialised: valid before any code runs
void (*g_after_flags_read)() = nullptr;  // likewise

// Defined after the flags in this file, so they are constructed when it runs.
const bool g_read_at_load = [] {
  ReadFlagsFromEnvironment();
  g_flags_read = true;
  if (g_after_flags_read != nullptr) g_after_flags_read();
  return true;
}();

}  // namespace

void WhenFlagsRead(void (*fn)()) {
  if (g_flags_read) {
    fn();
  } else {
    g_after_flags_read = fn;
  }
}

}  // namespace paddle_prof::internal
