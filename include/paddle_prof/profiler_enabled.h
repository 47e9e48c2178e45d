// Whether a profiling window is open: the check every RecordEvent makes inline, and the
// open window's id that the profiler's recorders read. profiler.h is the API around it;
// this header alone is what the hot path needs.
#ifndef PADDLE_PROF_PROFILER_ENABLED_H_
#define PADDLE_PROF_PROFILER_ENABLED_H_

#include <atomic>
#include <cstdint>

namespace paddle_prof {

namespace internal {
// The open window's id, 0 while profiling is off. Read inline by RecordEvent so that
// a disabled scope costs one relaxed load and a branch; written only by the profiler.
extern std::atomic<uint64_t> g_window;
}  // namespace internal

inline bool IsProfilerEnabled() { return internal::g_window.load(std::memory_order_relaxed) != 0; }

}  // namespace paddle_prof

#endif  // PADDLE_PROF_PROFILER_ENABLED_H_
