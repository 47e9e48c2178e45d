// Collection of a closing window: what each thread recorded in it (records read in
// place, under the recorder registry's lock that the Collection then holds), the
// counts behind the warnings, the live blocks, and what the outputs derive once for
// all of them (the memory timeline, the GPU correlation).
#ifndef PADDLE_PROF_SRC_COLLECTOR_H_
#define PADDLE_PROF_SRC_COLLECTOR_H_

#include <cstdint>
#include <unordered_map>

#include "collection.h"

namespace paddle_prof::internal {

class ThreadRecorder;

// Where a flight recorder's oldest kept step starts on one thread.
struct KeptStart {
  size_t record = 0;    // its first record
  uint64_t serial = 0;  // the thread's serial then (ThreadRecorder::SerialNow)
};

// Adds to `c` what the threads recorded in `window` (from `kept_from`, where a flight
// recorder gives a thread's oldest kept step), and counts the calls begun in windows
// [first_window, window) (resets of the same profiler) still open. The caller has filled
// in the window's bounds, steps, places and GPU capture.
void CollectThreads(uint64_t window, uint64_t first_window,
                    const std::unordered_map<const ThreadRecorder*, KeptStart>& kept_from,
                    Collection* c);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_COLLECTOR_H_
