// The profiler's entry points that are not public API.
#ifndef PADDLE_PROF_SRC_PROFILER_CONTROL_H_
#define PADDLE_PROF_SRC_PROFILER_CONTROL_H_

#include <string>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// Starts a whole-program profile from FLAGS_paddle_prof_state and prints its report
// at exit, or when SIGTERM, SIGINT or SIGHUP ends the program. It is implicit: a
// profiler the program enables itself replaces it silently, and a forked child drops
// it (the report and the files are the parent's).
void StartImplicitProfiler();

// How a launcher's implicit profile is reported when a signal ends the program.
struct ImplicitReport {
  EventSortingKey key = EventSortingKey::kTotal;
  std::string path;  // the trace, and the summary beside it; none when empty
  bool per_thread = false;
};

// An implicit profile started by a launcher (python -m paddle_prof run), which reports
// it when the program ends, except on SIGTERM and SIGHUP: those print `report` and
// write its files here (SIGINT is left to the launcher). False, and nothing changed,
// when a profiler is already running.
bool EnableImplicitProfiler(ProfilerState state, const ImplicitReport& report);
// Whether an implicit profile is still running (no explicit profiler replaced it).
bool ImplicitProfilerRunning();

// MarkStep() calls so far in the open window: the step an allocation belongs to.
int StepsInWindow();

// Whether the open window records the memory timeline (FLAGS_paddle_prof_memory_timeline
// when it opened).
bool MemoryTimelineOn();

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PROFILER_CONTROL_H_
