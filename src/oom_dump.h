// The out-of-memory dump: when an allocation fails while a window is open (a
// TrackingAllocator's base, the torch bridge's CPU allocator), a snapshot of the window
// is written before the failure goes on to the program unchanged. Its summary says what
// failed ("oom": the place, the bytes asked, the event and the path of events open on
// the failing thread, what the place held) and a warning, also printed on stderr, names
// the largest holders. One dump per window; later failures are counted in the window's
// report. The dump is out_of_memory.h's handler from the moment the library loads.
#ifndef PADDLE_PROF_SRC_OOM_DUMP_H_
#define PADDLE_PROF_SRC_OOM_DUMP_H_

#include <cstdint>
#include <string>

namespace paddle_prof::internal {

// Where the open window's dump goes (the Python profiler's oom_path); "" for the
// default: FLAGS_paddle_prof_oom_path, else <profile path>.oom.json, else
// ./paddle_prof.oom.<pid>.json.
void SetOutOfMemoryPath(uint64_t window, const std::string& path);

// Failures in `window` after its dump.
int64_t FailuresAfterTheDump(uint64_t window);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_OOM_DUMP_H_
