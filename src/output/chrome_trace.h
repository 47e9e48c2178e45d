// Writes the window's calls as a Chrome trace (JSON object format): one complete
// event ("ph":"X") per call on its thread's track, thread names, and the steps as
// ranges on a track of their own; a memory counter per place, and the GPU's work with
// an arrow from the call that launched it. Opens in Perfetto and chrome://tracing.
// Times are microseconds since the window's start with exactly three decimals (whole
// nanoseconds, rounded down), e.g. "ts":1234.567.
#ifndef PADDLE_PROF_SRC_CHROME_TRACE_H_
#define PADDLE_PROF_SRC_CHROME_TRACE_H_

#include <string>

#include "collection.h"

namespace paddle_prof::internal {

// GPU n is drawn as process kGpuPidBase + n: far above any real pid. A merge of traces
// draws the fresh pids it needs from here on too.
inline constexpr int kGpuPidBase = 0x7fff0000;

// Returns false and sets `error` when the file cannot be written.
bool WriteChromeTrace(const Collection& collection, const std::string& path, std::string* error);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_CHROME_TRACE_H_
