// paddle_prof: turning the profiler on and off, and marking training steps.
//
// A profiling window opens with EnableProfiler() (or ResetProfiler(), which drops
// what was recorded so far) and closes with DisableProfiler(), which builds the
// Report, prints its table and optionally writes a Chrome trace and a summary JSON.
//
//   paddle_prof::EnableProfiler(paddle_prof::ProfilerState::kCPU);
//   for (int it = 0; it < 10; ++it) {
//     if (it == 2) paddle_prof::ResetProfiler();   // warm-up left out
//     TrainStep();
//     paddle_prof::MarkStep();
//   }
//   paddle_prof::Report report = paddle_prof::DisableProfiler(
//       paddle_prof::EventSortingKey::kTotal, "/tmp/profile.json");
//
// All functions here are thread-safe; ResetProfiler() and DisableProfiler() may be
// called from any thread while other threads record.
#ifndef PADDLE_PROF_PROFILER_H_
#define PADDLE_PROF_PROFILER_H_

#include <string>

#include "paddle_prof/profiler_enabled.h"  // IsProfilerEnabled()
#include "paddle_prof/report.h"

namespace paddle_prof {

// Throws std::logic_error if the profiler is already enabled, and
// std::runtime_error for kCUDA/kAll when no usable GPU is present.
void EnableProfiler(ProfilerState state);

// Drops everything recorded so far (events, steps); profiling stays on. Calls that
// are open at this moment are left out of the report and counted in a warning.
void ResetProfiler();

// Stops recording, builds the report, prints its table on stdout and, when
// `profile_path` is not empty, writes the Chrome trace to `profile_path` and the
// summary to `profile_path + ".summary.json"`. A path that cannot be written is
// logged as an error; the report is still printed and returned.
// Throws std::logic_error if the profiler is not enabled.
Report DisableProfiler(EventSortingKey key = EventSortingKey::kDefault,
                       const std::string& profile_path = "");

// The same as DisableProfiler() without printing: for bindings that print the
// table through their own language's stream (Report::Table()).
Report StopProfiler(EventSortingKey key = EventSortingKey::kDefault,
                    const std::string& profile_path = "");

// The report of the running window so far, written like StopProfiler()'s when
// `profile_path` is not empty; recording goes on. Calls still open are left out and
// counted in a warning; GPU work is reported when the window stops. Throws
// std::logic_error if the profiler is not enabled.
Report SnapshotProfiler(EventSortingKey key = EventSortingKey::kDefault,
                        const std::string& profile_path = "");

// Marks the end of an iteration (training step). No-op while profiling is off.
void MarkStep();
// The same, for a step that processed `num_samples` samples (its batch size): the report's
// throughput gives samples per second. std::invalid_argument when it is negative.
void MarkStep(int64_t num_samples);

// Names a module of a model (paddle_prof.torch's modules): its events are
// "nn.Module: <path>" and "nn.Module: <path>.backward", and the report's `modules` give
// it this type and parameter count. A later call for the same path replaces the earlier.
void NoteModule(const std::string& path, const std::string& type, int64_t params,
                int64_t param_bytes);

}  // namespace paddle_prof

#endif  // PADDLE_PROF_PROFILER_H_
