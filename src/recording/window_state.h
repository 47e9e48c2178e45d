// The open profiling window as the hot path reads it: its id (g_window, declared in
// paddle_prof/profiler.h for the inline IsProfilerEnabled), the steps marked in it and
// whether it records the memory timeline. Written only by the window control
// (profiler.cc) under its lock; read lock-free by the recorders, which sit below it and
// so never call up into it.
#ifndef PADDLE_PROF_SRC_WINDOW_STATE_H_
#define PADDLE_PROF_SRC_WINDOW_STATE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "paddle_prof/profiler_enabled.h"

namespace paddle_prof::internal {

// MarkStep() calls so far in the open window: the step an allocation belongs to.
inline std::atomic<int> g_steps_in_window{0};
// FLAGS_paddle_prof_memory_timeline as the open window started.
inline std::atomic<bool> g_memory_timeline{true};
// Whether the open window's report splits memory into categories (paddle_prof.torch's
// windows, which tell the blocks' kinds); off as each window is enabled, kept by a reset.
inline std::atomic<bool> g_memory_categories{false};
// Whether the framework of the open window's categories names its ops plainly
// ("matmul", "matmul_grad": paddle_prof.paddle's), not "aten::"; set and cleared with
// g_memory_categories.
inline std::atomic<bool> g_plain_op_names{false};

// A window whose records go to memory-mapped files (capture_dir): the window and the
// directory. Published before the window's id; a recorder that starts `window` maps its
// chunks from files in `dir` when this names it. Never freed (the window control keeps
// every one).
struct CaptureTarget {
  uint64_t window = 0;
  std::string dir;
};
inline std::atomic<const CaptureTarget*> g_capture{nullptr};

inline int StepsInWindow() { return g_steps_in_window.load(std::memory_order_relaxed); }
inline bool MemoryTimelineOn() { return g_memory_timeline.load(std::memory_order_relaxed); }
inline bool MemoryCategoriesOn() { return g_memory_categories.load(std::memory_order_relaxed); }
inline bool PlainOpNamesOn() { return g_plain_op_names.load(std::memory_order_relaxed); }

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_WINDOW_STATE_H_
